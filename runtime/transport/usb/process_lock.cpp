// process_lock.cpp: flock(LOCK_EX | LOCK_NB) on a file in the temp directory.
//
//   process_lock lock("usb:3-2", "am_usb_3-2.lock");
//
// Not thread-safe.
#include "runtime/transport/usb/process_lock.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <tg/core/error.hpp>

namespace tg::transport::usb {

process_lock::process_lock(const std::string& device_name, const std::string& file_name,
                           const std::string& directory) {
  std::string dir = directory;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = tmp && *tmp ? tmp : "/tmp";
  }
  path_ = dir + "/" + file_name;
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0)
    throw device_error(str(device_name, ": cannot open lock file ", path_, ": ", std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw device_error(str(device_name, " is in use by another process (it holds ", path_,
                             "); stop that process or pick another device"));
    throw device_error(str(device_name, ": cannot lock ", path_, ": ", std::strerror(err)));
  }
}

process_lock::~process_lock() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the flock
}

}  // namespace tg::transport::usb
