// process_lock.hpp: one process per bridge: an exclusive, non-blocking flock on a lock file named
// after the device in the temp directory (am_<name>.lock, as tinygrad/runtime/support/system.py:
// System.flock_acquire).
//
//   process_lock lock("usb:3-2", "am_usb_3-2.lock");   // device_error if another process holds it
//
// The lock goes with the process: a crash releases it, so a stale file never blocks anyone.
// Not thread-safe; one object per device per process.
#pragma once
#include <string>

namespace tg::transport::usb {

class process_lock {
 public:
  // `directory` empty: $TMPDIR, else /tmp.
  process_lock(const std::string& device_name, const std::string& file_name, const std::string& directory = "");
  ~process_lock();
  process_lock(const process_lock&) = delete;
  process_lock& operator=(const process_lock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace tg::transport::usb
