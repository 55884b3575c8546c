// posix_pci_os.cpp: sysfs files, config space, BAR mappings and lock files (see posix_pci_os.hpp).
#include "runtime/transport/pci/posix_pci_os.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "runtime/transport/pci/host_dma_region.hpp"
#include "runtime/transport/pci/mapped_bar.hpp"
#include "runtime/transport/pci/pci_devices.hpp"
#include "runtime/transport/pci/pci_text.hpp"
#include <tg/core/error.hpp>

namespace tg::transport::pci {

namespace {

// Owns one file descriptor.
class unique_fd {
 public:
  explicit unique_fd(int fd) : fd_(fd) {}
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
  unique_fd& operator=(unique_fd&&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

[[noreturn]] void fail(const char* op, const std::string& path, int err) {
  throw device_error(str("pci: ", op, " ", path, " failed: ", std::strerror(err)));
}

unique_fd open_or_throw(const std::string& path, int flags, const char* op) {
  unique_fd fd(::open(path.c_str(), flags | O_CLOEXEC));
  if (fd.get() < 0) fail(op, path, errno);
  return fd;
}

class flock_lock final : public os_lock {
 public:
  explicit flock_lock(int fd) : fd_(fd) {}
  ~flock_lock() override { ::close(fd_); }  // closing the last descriptor drops the flock

 private:
  int fd_;
};

}  // namespace

posix_pci_os::posix_pci_os(posix_pci_os_options options) : options_(std::move(options)) {
  if (options_.lock_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    options_.lock_dir = tmp && *tmp ? tmp : "/tmp";
  }
}

std::string posix_pci_os::device_path(const std::string& bus) const { return options_.sysfs_root + "/" + bus; }

std::string posix_pci_os::file_path(const std::string& bus, const std::string& name) const {
  return device_path(bus) + "/" + name;
}

std::vector<std::string> posix_pci_os::list_devices() {
  DIR* dir = ::opendir(options_.sysfs_root.c_str());
  if (!dir) {
    if (errno == ENOENT) return {};  // no PCI bus at all (a container): nothing to list
    fail("listing", options_.sysfs_root, errno);
  }
  std::vector<std::string> buses;
  while (const dirent* e = ::readdir(dir))
    if (e->d_name[0] != '.') buses.emplace_back(e->d_name);
  ::closedir(dir);
  return buses;
}

bool posix_pci_os::has_file(const std::string& bus, const std::string& name) {
  return ::access(file_path(bus, name).c_str(), F_OK) == 0;
}

std::string posix_pci_os::read_text(const std::string& bus, const std::string& name) {
  const std::string path = file_path(bus, name);
  unique_fd fd = open_or_throw(path, O_RDONLY, "opening");
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) fail("reading", path, errno);
    if (n == 0) return text;
    text.append(buf, std::size_t(n));
  }
}

void posix_pci_os::write_text(const std::string& bus, const std::string& name, const std::string& text) {
  const std::string path = file_path(bus, name);
  unique_fd fd = open_or_throw(path, O_WRONLY | O_TRUNC, "opening");
  // sysfs takes one write per value: a split write would be two values.
  const ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n < 0) fail(str("writing \"", text, "\" to").c_str(), path, errno);
  if (std::size_t(n) != text.size())
    throw device_error(str("pci: short write to ", path, ": ", n, " of ", text.size(), " bytes"));
}

int posix_pci_os::open_rw_error(const std::string& bus, const std::string& name) {
  const int fd = ::open(file_path(bus, name).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

std::optional<std::string> posix_pci_os::bound_driver(const std::string& bus) {
  std::error_code ec;
  // `driver` is a link to /sys/bus/pci/drivers/<name>; its target's last component is the name.
  const std::filesystem::path target = std::filesystem::canonical(file_path(bus, "driver"), ec);
  if (ec) return std::nullopt;
  return target.filename().string();
}

void posix_pci_os::read_config(const std::string& bus, std::uint32_t offset, std::span<std::byte> out) {
  const std::string path = file_path(bus, "config");
  unique_fd fd = open_or_throw(path, O_RDONLY, "opening");
  const ssize_t n = ::pread(fd.get(), out.data(), out.size(), off_t(offset));
  if (n < 0) fail(str("reading ", out.size(), " bytes at ", hex{offset}, " of").c_str(), path, errno);
  if (std::size_t(n) != out.size())
    throw device_error(str("pci: reading ", path, " at ", hex{offset}, " returned ", n, " of ", out.size(),
                           " bytes (config space beyond 64 bytes needs root)"));
}

void posix_pci_os::write_config(const std::string& bus, std::uint32_t offset, std::span<const std::byte> in) {
  const std::string path = file_path(bus, "config");
  unique_fd fd = open_or_throw(path, O_RDWR | O_SYNC, "opening");
  const ssize_t n = ::pwrite(fd.get(), in.data(), in.size(), off_t(offset));
  if (n < 0) fail(str("writing ", in.size(), " bytes at ", hex{offset}, " of").c_str(), path, errno);
  if (std::size_t(n) != in.size())
    throw device_error(str("pci: writing ", path, " at ", hex{offset}, " wrote ", n, " of ", in.size(), " bytes"));
}

std::unique_ptr<bar_window> posix_pci_os::map_resource(const std::string& bus, unsigned index, std::uint64_t size) {
  const std::string path = file_path(bus, str("resource", index));
  unique_fd fd = open_or_throw(path, O_RDWR | O_SYNC, "opening");
  // BAR0 is VRAM (bulk copies are fine); the others are registers, accessed dword by dword.
  return std::make_unique<mapped_bar>(fd.get(), size, index != 0,
                                      str(pci_device_name(bus), " BAR", index, " (", path, ")"));
}

std::string posix_pci_os::lock_path(const std::string& bus) const {
  return options_.lock_dir + "/am_" + bus + ".lock";
}

std::unique_ptr<os_lock> posix_pci_os::try_lock(const std::string& bus) {
  const std::string path = lock_path(bus);
  unique_fd fd = open_or_throw(path, O_RDWR | O_CREAT, "creating lock file");
  // 0666 whatever the umask, so another user's later run can take the lock (as
  // tinygrad/runtime/support/system.py: System.flock_acquire).
  ::fchmod(fd.get(), 0666);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return nullptr;
    fail("locking", path, errno);
  }
  return std::make_unique<flock_lock>(fd.release());
}

std::unique_ptr<dma_region> posix_pci_os::allocate_dma(std::uint64_t bytes) {
  return std::make_unique<host_dma_region>(bytes, options_.pagemap_path);
}

}  // namespace tg::transport::pci
