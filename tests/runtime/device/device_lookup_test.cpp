// device_lookup_test.cpp: which registration a device name reaches: the most specific one, cut
// at a ':' ("AMD:EMU:gfx12" tries "AMD:EMU:gfx12", then "AMD:EMU" with "gfx12", then "AMD" with
// "EMU:gfx12"), and the error for a name no registration covers.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include <tg/device.hpp>

namespace {

// A backend that remembers which registration made it and with which arguments.
class recording_backend final : public tg::backend {
 public:
  recording_backend(std::string kind, std::string args) : kind(std::move(kind)), args(std::move(args)) {}
  std::string name() const override { return kind; }
  void* allocate(std::size_t) override { return nullptr; }
  void release(void*) override {}
  void copy_in(void*, const void*, std::size_t) override {}
  void copy_out(void*, const void*, std::size_t) override {}
  std::shared_ptr<tg::program> compile(const tg::kernel_source&) override { return nullptr; }
  void synchronize() override {}
  std::string kind, args;
};

tg::backend_factory recorder(const std::string& kind) {
  return [kind](const std::string& args, const tg::device_options&) { return std::make_shared<recording_backend>(kind, args); };
}

const tg::backend_registration outer("LOOKUPTEST", recorder("LOOKUPTEST"));
const tg::backend_registration inner("LOOKUPTEST:SUB", recorder("LOOKUPTEST:SUB"));

const recording_backend& opened(const std::string& name) {
  static std::unique_ptr<tg::device> keep;
  keep = std::make_unique<tg::device>(name);
  return dynamic_cast<const recording_backend&>(keep->impl());
}

}  // namespace

TEST_CASE("a device name reaches its most specific registration, with the rest as arguments") {
  CHECK(opened("LOOKUPTEST:SUB:gfx12").kind == "LOOKUPTEST:SUB");
  CHECK(opened("LOOKUPTEST:SUB:gfx12").args == "gfx12");
  CHECK(opened("LOOKUPTEST:SUB:gfx12:usb").args == "gfx12:usb");
  CHECK(opened("LOOKUPTEST:SUB").kind == "LOOKUPTEST:SUB");
  CHECK(opened("LOOKUPTEST:SUB").args == "");
  SUBCASE("names the inner registration does not cover fall back to the outer one") {
    CHECK(opened("LOOKUPTEST:OTHER:gfx12").kind == "LOOKUPTEST");
    CHECK(opened("LOOKUPTEST:OTHER:gfx12").args == "OTHER:gfx12");
    CHECK(opened("LOOKUPTEST:SUBX").args == "SUBX");  // a prefix only counts up to a ':'
    CHECK(opened("LOOKUPTEST").kind == "LOOKUPTEST");
    CHECK(opened("LOOKUPTEST").args == "");
  }
}

TEST_CASE("the existing names keep working and an unknown kind lists the known ones") {
  CHECK(tg::device("CPU").impl().name() == "CPU");
  CHECK_THROWS_WITH_AS(tg::device("NOSUCH:X"), doctest::Contains("no such device kind"), tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::device("NOSUCH:X"), doctest::Contains("LOOKUPTEST:SUB"), tg::usage_error);
  CHECK_THROWS_AS(tg::device(""), tg::usage_error);
}
