// nbio_doorbell.cpp: the S2A doorbell entries (see nbio_doorbell.hpp).
#include "drivers/amd/ip/nbio_doorbell.hpp"

#include <tg/core/error.hpp>

namespace tg::amd {

namespace {

// nbio_4_3_0_offset.h regS2A_DOORBELL_ENTRY_0_CTRL 0x7a80 (BASE_IDX 5); nbif_6_3_1_offset.h
// regGDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL 0x01cb (BASE_IDX 2); entries 1..3 follow each.
struct s2a_place {
  unsigned segment;
  std::uint32_t entry0;
};
constexpr s2a_place nbio_4_3{5, 0x7A80}, nbif_6_3_1{2, 0x1CB};

// Field shifts of S2A_DOORBELL_ENTRY_2_CTRL (nbio_4_3_0_sh_mask.h, the same in nbif_6_3_1_sh_mask.h).
constexpr unsigned enable_at = 0, awid_at = 1, range_offset_at = 7, range_size_at = 17, awaddr_at = 28;
constexpr std::uint32_t sdma_awid = 0xE, sdma_awaddr = 0x3;
constexpr std::uint32_t sdma_doorbell_range_dwords = 20;  // soc21.c / soc24.c: doorbell_index.sdma_doorbell_range

}  // namespace

std::uint64_t nbio_s2a_entry(const am_context& c, unsigned n) {
  const s2a_place p = c.disc.is_gfx12() ? nbif_6_3_1 : nbio_4_3;
  const ip_block& nbio = c.disc.require(hw_id::nbif);
  if (p.segment >= nbio.bases.size())
    throw device_error(str(c.name(), ": the S2A doorbell entries are in NBIO segment ", p.segment,
                           " but discovery gave ", nbio.bases.size(), " base addresses"));
  return nbio.bases[p.segment] + p.entry0 + n;
}

void nbio_gc_doorbell_init(am_context& c) {
  c.io.write(nbio_s2a_entry(c, 0), 0x30000007);
  c.io.write(nbio_s2a_entry(c, 3), 0x3000000D);
}

void nbio_sdma_doorbell_range(am_context& c, std::uint64_t doorbell_bytes) {
  const std::uint64_t entry = nbio_s2a_entry(c, 2);
  std::uint32_t v = c.io.read(entry) & 0x0E000040u;  // keep FENCE_ENABLE, 64BIT_SUPPORT_DIS, NEED_DEDUCT, DROP_EN
  v |= 1u << enable_at | sdma_awid << awid_at | std::uint32_t(doorbell_bytes / 4) << range_offset_at |
       sdma_doorbell_range_dwords << range_size_at | sdma_awaddr << awaddr_at;
  c.io.write(entry, v);
}

}  // namespace tg::amd
