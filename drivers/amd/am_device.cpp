// am_device.cpp: boot (warm or full) and teardown of an am_device (see am_device.hpp); queues in
// am_device_queues.cpp, memory and copies in am_device_copy.cpp.
#include "drivers/amd/am_device.hpp"

#include <tg/core/error.hpp>

#include "drivers/amd/am_firmware.hpp"
#include "drivers/amd/ip/psp_v13.hpp"
#include "drivers/amd/ip/smu_v13.hpp"
#include "drivers/amd/ip/soc21.hpp"

namespace tg::amd {

namespace {

constexpr std::uint64_t msg1_bytes_pci = 1 << 20, msg1_bytes_usb = 512 << 10;  // tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c
constexpr std::uint64_t smu_table_bytes = 16 << 10;

am_info info_of(const am_context& c, transport::device_transport& t) {
  const discovery& d = c.disc;
  return {t.name(), t.kind(), d.gfx_target(), d.version_of(hw_id::gc), d.version_of(hw_id::sdma0),
          d.version_of(hw_id::mmhub), d.version_of(hw_id::osssys), d.version_of(hw_id::mp0), d.version_of(hw_id::mp1),
          d.vram_bytes, d.bar0, d.bar2, d.bar5, d.large_bar, false};
}

// Reports a step before the member that carries it out is constructed.
transport::device_transport& announce(transport::device_transport& t, const am_options& o, std::string_view step) {
  if (o.progress) o.progress(step);
  return t;
}

}  // namespace

am_device::am_device(transport::device_transport& t, const am_options& options)
    : t_(t), ctx_(announce(t, options, "discovery"), options), info_(info_of(ctx_, t)),
      gmc_(ctx_), ih_(ctx_), gfx_(ctx_), sdma_(ctx_), memscratch_(ctx_.boot_alloc(4096)),
      dummy_page_(ctx_.boot_alloc(4096)) {
  info_.warm_boot = is_warm_bootable();
  if (info_.warm_boot) boot_warm();
  else boot_full();
  ctx_.progress("queues");
  start_queues();
  set_up_staging();
  ctx_.gc->write("regSCRATCH_REG7", am_boot_marker);
  ctx_.gc->write("regSCRATCH_REG6", 1);  // a live session; teardown writes 0 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
  ctx_.progress("ready");
}

am_device::~am_device() {
  try {
    gfx_.stop_queue();
    sdma_.stop_queue();
    ctx_.gc->write("regSCRATCH_REG6", 0);
  } catch (...) {  // a dead link or a hung dequeue: REG6 stays 1 and the next session boots fully
  }
}

bool am_device::is_warm_bootable() {
  ip_registers& gc = *ctx_.gc;
  return !ctx_.opt.force_full_boot && gc.read("regSCRATCH_REG7") == am_boot_marker && gc.read("regSCRATCH_REG6") == 0 &&
         gc.read(fault_status_register()) == 0;
}

const char* am_device::fault_status_register() const {  // the GC hub's latched fault (_LO32 on gfx12)
  return ctx_.disc.is_gfx12() ? "regGCVM_L2_PROTECTION_FAULT_STATUS_LO32" : "regGCVM_L2_PROTECTION_FAULT_STATUS";
}

queue::pm4::gfx_version am_device::gfx() const {
  return ctx_.disc.is_gfx11() ? queue::pm4::gfx_version::gfx11 : queue::pm4::gfx_version::gfx12;
}

// This session's page tables on the MM hub, then the interrupt ring (both boots).
void am_device::init_mm_hub_and_ih() {
  ctx_.progress("gmc: mm hub");
  mem_ = std::make_unique<am_memory>(ctx_, gmc_);
  gmc_.init_hub(hub::mm, mem_->tables().root_table(), am_memory::va_base.value, am_memory::va_size, memscratch_,
                dummy_page_);
  ctx_.progress("ih");
  ih_.hw_init();
}

void am_device::init_gc_hub() {
  gmc_.init_hub(hub::gc, mem_->tables().root_table(), am_memory::va_base.value, am_memory::va_size, memscratch_,
                dummy_page_);
  gmc_.set_gc_hub_ready(true);
  gmc_.flush(hub::gc);  // translations made before the hub was ready
}

void am_device::boot_full() {
  ctx_.progress("firmware");
  const firmware_set fw = load_firmware(ctx_.opt.firmware_dir, firmware_versions_of(ctx_.disc));
  smu_v13 smu(ctx_);
  if (ctx_.mp0(81) != 0 && smu.is_alive()) {  // an earlier session's sOS (C2PMSG_81) and SMU: start clean
    ctx_.progress("mode-1 reset");
    const pci_state saved = soc21_save_pci_state(t_);  // with bus mastering on: the restore turns it back on
    soc21_set_bus_master(t_, false);
    smu.mode1_reset();
    soc21_finish_mode1_reset(ctx_, saved);
  }
  ctx_.progress("soc");
  soc21_init(ctx_);
  init_mm_hub_and_ih();

  // PSP firmware staging (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c): boot VRAM on PCI; bridge memory on USB,
  // mapped as system pages and addressed by its GPU VA.
  std::unique_ptr<transport::dma_region> dma;
  memory::gpu_va dma_va;
  psp_msg1_buffer msg1;
  if (t_.kind() == transport::transport_kind::usb) {
    dma = t_.allocate_dma(msg1_bytes_usb);
    dma_va = mem_->map_system(dma->page_bus_addresses(), 1 << 20);
    msg1 = {dma_va.value, msg1_bytes_usb, [&dma](std::span<const std::byte> b) {
              std::vector<std::byte> whole(b.begin(), b.end());
              whole.resize((whole.size() + 511) / 512 * 512);  // whole sectors go in bulk (usb_sram.hpp)
              dma->write(0, whole);
            }};
  } else {
    const memory::gpu_pa pa = ctx_.boot.allocate(msg1_bytes_pci, 1 << 20);
    msg1 = {ctx_.mc(pa), msg1_bytes_pci, [this, pa](std::span<const std::byte> b) {
              ctx_.write_vram(pa, b);
              ctx_.io.flush_hdp();
            }};
  }
  psp_v13(ctx_, std::move(msg1)).hw_init(fw);
  if (dma) mem_->unmap_system(dma_va, dma->size());
  dma.reset();

  ctx_.progress("smu");
  smu.hw_init(ctx_.mc(ctx_.boot_alloc(smu_table_bytes)));
  ctx_.progress("gfx: rlc autoload");
  gfx_.wait_rlc_autoload();
  ctx_.progress("gmc: gc hub");
  init_gc_hub();
  ctx_.progress("gfx: mec");
  gfx_.config_mec(fw);
  ctx_.progress("sdma");
  sdma_.hw_init();
}

void am_device::boot_warm() {
  // PSP, SMU and the firmware's memory are as the last session left them; the hubs are pointed
  // at this session's page tables and the engines restarted.
  init_mm_hub_and_ih();
  ctx_.progress("gmc: gc hub");
  init_gc_hub();
  ctx_.progress("gfx: mec reset");
  gfx_.reset_mec();
  ctx_.progress("sdma");
  sdma_.stop_queue();
  sdma_.hw_init();
}

}  // namespace tg::amd
