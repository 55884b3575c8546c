// thread_view.cpp: one interpreter thread's pages and fetches (see thread_view.hpp).
#include "drivers/emu/shader/thread_view.hpp"

#include <algorithm>
#include <cstring>

namespace tg::emu::shader {

std::byte* thread_view::host_page(gpu_va va, access_kind access, utcl2_client client) {
  const std::uint64_t number = va.value / page_bytes;
  page& p = pages_[number % pages_.size()];
  if (p.number == number && (access == access_kind::read ? p.readable : p.writable)) return p.host;
  std::lock_guard<std::mutex> g(s_.lock);
  const mmu::run r = s_.memory.translate(va, 1, access, client);  // a fault is raised for `va` itself
  if (p.number != number) p = {number};
  (access == access_kind::read ? p.readable : p.writable) = true;
  // A leaf maps at least a whole aligned 4 KiB page (memory/page_table_walker.hpp), as does the
  // system aperture, so the page's first byte is as far before pa as va is into its page.
  const gpu_pa first{r.pa.value - va.value % page_bytes};
  vram& v = s_.memory.vram_memory();
  p.host = !r.system && v.contains(first, page_bytes) ? v.at(first, page_bytes) : nullptr;
  return p.host;
}

void thread_view::read(gpu_va va, std::span<std::byte> out, utcl2_client client) {
  for (std::size_t done = 0; done < out.size();) {
    const gpu_va at = va + done;
    const std::size_t n = std::min<std::size_t>(out.size() - done, page_bytes - at.value % page_bytes);
    if (const std::byte* p = host_page(at, access_kind::read, client)) {
      std::memcpy(out.data() + done, p + at.value % page_bytes, n);
    } else {
      std::lock_guard<std::mutex> g(s_.lock);
      s_.memory.read(at, out.subspan(done, n), client);
    }
    done += n;
  }
}

void thread_view::write(gpu_va va, std::span<const std::byte> in, utcl2_client client) {
  for (std::size_t done = 0; done < in.size();) {
    const gpu_va at = va + done;
    const std::size_t n = std::min<std::size_t>(in.size() - done, page_bytes - at.value % page_bytes);
    if (std::byte* p = host_page(at, access_kind::write, client)) {
      std::memcpy(p + at.value % page_bytes, in.data() + done, n);
    } else {
      std::lock_guard<std::mutex> g(s_.lock);
      s_.memory.write(at, in.subspan(done, n), client);
    }
    done += n;
  }
}

}  // namespace tg::emu::shader
