// gpu_roofline_model_test.cpp: the roofline model's arithmetic on counters made by hand.
#include <doctest/doctest.h>

#include <string>

#include "drivers/emu/shader/modeled_cost.hpp"

using tg::emu::shader::model;
using tg::emu::shader::dispatch_counters;

TEST_CASE("a dispatch that reads 96 MB in distinct lines is memory bound at 100 us plus the dispatch cost") {
  dispatch_counters k;
  k.global_lines = 750'000;  // 96 MB
  k.waves = 19200;           // 100 per SIMD of the 7900 XTX's 192
  k.valu = 19200 * 50;       // 50 each: 5000 clocks on the busiest SIMD = 2 us
  const auto m = model(tg::emu::shader::rx_7900_xtx, k);
  CHECK(m.memory_s == doctest::Approx(100e-6));
  CHECK(m.issue_s == doctest::Approx(2e-6));
  CHECK(std::string(m.bound()) == "memory");
  CHECK(m.total_s == doctest::Approx(102e-6));
  CHECK(m.bandwidth_share() == doctest::Approx(100.0 / 102.0));
}

TEST_CASE("fewer waves than SIMDs pay for the idle SIMDs: one wave's instructions at the clock") {
  dispatch_counters k;
  k.global_lines = 1;
  k.waves = 10;
  k.valu = 10 * 25'000;  // 25,000 per wave: 10 us at 2.5 GHz, whatever the card's width
  const auto m = model(tg::emu::shader::rx_7900_xtx, k);
  CHECK(std::string(m.bound()) == "issue");
  CHECK(m.issue_s == doctest::Approx(10e-6));
  CHECK(m.total_s == doctest::Approx(12e-6));
}

TEST_CASE("the SIMD count and waves round up: 193 waves on 192 SIMDs take two waves' time") {
  dispatch_counters k;
  k.waves = 193;
  k.valu = 193 * 1000;
  CHECK(model(tg::emu::shader::rx_7900_xtx, k).issue_s == doctest::Approx(2 * 1000 / 2.5e9));
  CHECK(model(tg::emu::shader::rx_9070_xt, k).issue_s == doctest::Approx(2 * 1000 / 2.97e9));  // 128 SIMDs
}

TEST_CASE("waits for loads in flight cost a latency each, per round of resident waves") {
  dispatch_counters k;
  k.global_lines = 1;
  k.waves = 192 * 32;  // 32 waves per SIMD of the 7900 XTX
  k.waves_per_simd = 16;  // resident at once: two rounds
  k.max_wave_memory_waits = 100;
  const auto m = model(tg::emu::shader::rx_7900_xtx, k);
  CHECK(m.latency_s == doctest::Approx(2 * 100 * 500e-9));
  CHECK(std::string(m.bound()) == "latency");
  CHECK(m.total_s == doctest::Approx(100e-6 + 2e-6));
}

TEST_CASE("each emulated processor is modeled as its generation's card") {
  CHECK(std::string(tg::emu::shader::modeled_card_for("gfx1100").name) == "RX 7900 XTX");
  CHECK(std::string(tg::emu::shader::modeled_card_for("gfx1101").name) == "RX 7900 XTX");
  CHECK(std::string(tg::emu::shader::modeled_card_for("gfx1200").name) == "RX 9070 XT");
  CHECK(std::string(tg::emu::shader::modeled_card_for("gfx1201").name) == "RX 9070 XT");
}
