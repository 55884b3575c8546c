#!/usr/bin/env python3
"""gen_amd_regs.py: generate tg's AMD register and packet tables from the Linux amdgpu headers.

Reads the kernel's own headers (never hand-copied numbers) and writes constexpr C++ tables:

  drivers/amd/regs/<ip>.hpp     register tables (offset, segment, fields) for GC 11.0.0 / 11.0.3 / 12.0.0,
                                MMHUB 3.0.0 / 4.1.0 and OSSSYS 6.0.0 / 7.0.0, limited to the curated
                                register list below
  runtime/queue/pm4_gen.hpp     PM4 opcodes and field macros (amdgpu/nvd.h), VGT event types
                                (navi10_enum.h, checked against soc24_enum.h), and per GC version
                                the curated registers inside the SET_SH_REG/SET_UCONFIG_REG windows
  runtime/queue/sdma_gen.hpp    SDMA opcodes and packet field layouts (amdgpu/sdma_v6_0_0_pkt_open.h;
                                sdma_v7_0.c includes the same header, so it serves SDMA 6 and 7)

Usage (python3 standard library only):
  python3 scripts/gen_amd_regs.py                       # reads /usr/src/linux-source-6.12.tar.xz
  python3 scripts/gen_amd_regs.py --linux-src DIR       # an extracted tree (holds drivers/gpu/drm/amd)
  python3 scripts/gen_amd_regs.py --check               # compare with the committed files, write nothing

The tarball comes from the Debian package linux-source-6.12 (apt-get install linux-source-6.12).
"""
import argparse
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TARBALL = "/usr/src/linux-source-6.12.tar.xz"
AMD = "drivers/gpu/drm/amd/"
REGEN = "python3 scripts/gen_amd_regs.py --tarball /usr/src/linux-source-6.12.tar.xz"

# Every input file, relative to the kernel tree root.
INPUTS = {
    "nvd": AMD + "amdgpu/nvd.h",
    "sdma_pkt": AMD + "amdgpu/sdma_v6_0_0_pkt_open.h",
    "sdma_v7_c": AMD + "amdgpu/sdma_v7_0.c",
    "gfx_v11_c": AMD + "amdgpu/gfx_v11_0.c",
    "gfx_v12_c": AMD + "amdgpu/gfx_v12_0.c",
    "navi10_enum": AMD + "include/navi10_enum.h",
    "soc24_enum": AMD + "include/soc24_enum.h",
    "navi10_ip": AMD + "include/navi10_ip_offset.h",
    "gc_11_0_0_offset": AMD + "include/asic_reg/gc/gc_11_0_0_offset.h",
    "gc_11_0_0_sh_mask": AMD + "include/asic_reg/gc/gc_11_0_0_sh_mask.h",
    "gc_11_0_3_offset": AMD + "include/asic_reg/gc/gc_11_0_3_offset.h",
    "gc_11_0_3_sh_mask": AMD + "include/asic_reg/gc/gc_11_0_3_sh_mask.h",
    "gc_12_0_0_offset": AMD + "include/asic_reg/gc/gc_12_0_0_offset.h",
    "gc_12_0_0_sh_mask": AMD + "include/asic_reg/gc/gc_12_0_0_sh_mask.h",
    "mmhub_3_0_0_offset": AMD + "include/asic_reg/mmhub/mmhub_3_0_0_offset.h",
    "mmhub_3_0_0_sh_mask": AMD + "include/asic_reg/mmhub/mmhub_3_0_0_sh_mask.h",
    "mmhub_4_1_0_offset": AMD + "include/asic_reg/mmhub/mmhub_4_1_0_offset.h",
    "mmhub_4_1_0_sh_mask": AMD + "include/asic_reg/mmhub/mmhub_4_1_0_sh_mask.h",
    "osssys_6_0_0_offset": AMD + "include/asic_reg/oss/osssys_6_0_0_offset.h",
    "osssys_6_0_0_sh_mask": AMD + "include/asic_reg/oss/osssys_6_0_0_sh_mask.h",
    "osssys_7_0_0_offset": AMD + "include/asic_reg/oss/osssys_7_0_0_offset.h",
    "osssys_7_0_0_sh_mask": AMD + "include/asic_reg/oss/osssys_7_0_0_sh_mask.h",
    "makefile": "Makefile",
}

# ---------------------------------------------------------------------------------------------
# The curated register list: what the driver plausibly programs or reads (the registers that
# tinygrad/runtime/support/am/ip.py and amdev.py touch for the GMC, SDMA, doorbells, MQD, reset and
# IH). A pattern is a full-match regex over the name without "reg"; every plain name must exist in
# at least one version of its IP.
# ---------------------------------------------------------------------------------------------
GC_REGS = [
    r"COMPUTE_\w+", r"CP_HQD_\w+", r"CP_MQD_\w+",
    "CP_MEC_RS64_CNTL", "CP_MEC_RS64_PRGRM_CNTR_START", "CP_MEC_RS64_PRGRM_CNTR_START_HI",
    "CP_MEC_RS64_INSTR_PNTR", "CP_MEC_DOORBELL_RANGE_LOWER", "CP_MEC_DOORBELL_RANGE_UPPER",
    "CP_MEC_CNTL", "CP_ME_CNTL", "CP_PFP_PRGRM_CNTR_START", "CP_PFP_PRGRM_CNTR_START_HI",
    "CP_ME_PRGRM_CNTR_START", "CP_ME_PRGRM_CNTR_START_HI", "CP_STAT", "CP_CPC_STATUS",
    "CP_CPC_BUSY_STAT", "CP_CPF_STATUS", "CP_RB_WPTR_POLL_CNTL", "CP_INT_CNTL", "CP_INT_CNTL_RING0",
    "CP_ME1_PIPE0_INT_CNTL",
    "GRBM_CNTL", "GRBM_STATUS", "GRBM_STATUS2", "GRBM_SOFT_RESET", "GRBM_GFX_CNTL", "GRBM_GFX_INDEX",
    "SPI_COMPUTE_QUEUE_RESET", "SH_MEM_BASES", "SH_MEM_CONFIG", "TCP_CNTL", r"SCRATCH_REG[0-7]",
    "RLC_CNTL", "RLC_STAT", "RLC_SAFE_MODE", "RLC_RLCS_BOOTLOAD_STATUS", "RLC_SRM_CNTL",
    "RLC_SPM_MC_CNTL", "RLC_CGCG_CGLS_CTRL", "RLC_CGTT_MGCG_OVERRIDE",
    r"SDMA0_QUEUE0_\w+", "SDMA0_CNTL", "SDMA0_WATCHDOG_CNTL", "SDMA0_UTCL1_CNTL", "SDMA0_UTCL1_PAGE",
    "SDMA0_F32_CNTL", "SDMA0_MCU_CNTL", "SDMA0_STATUS_REG", "SDMA0_STATUS1_REG", "SDMA0_RLC_CGCG_CTRL",
    r"GCVM_CONTEXT0_\w+", r"GCVM_L2_\w+", r"GCVM_INVALIDATE_ENG17_\w+",
    r"GCVM_INVALIDATE_ENG\d+_ADDR_RANGE_(LO|HI)32",
    r"GCMC_VM_(FB_LOCATION_BASE|FB_LOCATION_TOP|FB_OFFSET|AGP_BASE|AGP_BOT|AGP_TOP|MX_L1_TLB_CNTL)",
    r"GCMC_VM_SYSTEM_APERTURE_\w+",
]
MMHUB_REGS = [
    r"MMVM_CONTEXT0_\w+", r"MMVM_L2_\w+", r"MMVM_INVALIDATE_ENG17_\w+",
    r"MMVM_INVALIDATE_ENG\d+_ADDR_RANGE_(LO|HI)32",
    r"MMMC_VM_(FB_LOCATION_BASE|FB_LOCATION_TOP|FB_OFFSET|AGP_BASE|AGP_BOT|AGP_TOP|MX_L1_TLB_CNTL)",
    r"MMMC_VM_SYSTEM_APERTURE_\w+",
]
OSSSYS_REGS = [
    r"IH_RB_\w+", r"IH_DOORBELL_RPTR\w*", "IH_CNTL", "IH_CNTL2", "IH_STATUS", "IH_CHICKEN",
    "IH_STORM_CLIENT_LIST_CNTL", "IH_INT_FLOOD_CNTL", "IH_MSI_STORM_CTRL", "IH_CLK_CTRL",
]

# (output name, family title, register list, IP base name in navi10_ip_offset.h, [(version, title)])
REG_FILES = [
    # GC 11.0.3 (Navi 32) moves the GC hub (GCVM_*, GCMC_*): gmc_v11_0.c gives it gfxhub_v3_0_3.c,
    # which reads gc_11_0_3_offset.h; the CP, RLC and SDMA registers are those of 11.0.0 (gfx_v11_0.c).
    ("gc", "GC", GC_REGS, "GC", [("gc_11_0_0", "GC 11.0.0 (gfx11)"), ("gc_11_0_3", "GC 11.0.3 (gfx11, Navi 32)"),
                                 ("gc_12_0_0", "GC 12.0.0 (gfx12)")]),
    ("mmhub", "MMHUB", MMHUB_REGS, "MMHUB",
     [("mmhub_3_0_0", "MMHUB 3.0.0 (gfx11)"), ("mmhub_4_1_0", "MMHUB 4.1.0 (gfx12)")]),
    ("osssys", "OSSSYS", OSSSYS_REGS, "OSSSYS",
     [("osssys_6_0_0", "OSSSYS 6.0.0 (IH, gfx11)"), ("osssys_7_0_0", "OSSSYS 7.0.0 (IH, gfx12)")]),
]

# Fields the PM4 dispatch sequence sets; each must exist in gc_11_0_0 and gc_12_0_0.
PM4_FIELDS = [
    ("COMPUTE_PGM_HI", "DATA"), ("COMPUTE_PGM_RSRC1", "PRIV"), ("COMPUTE_PGM_RSRC2", "USER_SGPR"),
    ("COMPUTE_PGM_RSRC2", "LDS_SIZE"), ("COMPUTE_DISPATCH_INITIATOR", "COMPUTE_SHADER_EN"),
    ("COMPUTE_DISPATCH_INITIATOR", "FORCE_START_AT_000"), ("COMPUTE_DISPATCH_INITIATOR", "CS_W32_EN"),
    ("COMPUTE_RESOURCE_LIMITS", "WAVES_PER_SH"), ("COMPUTE_NUM_THREAD_X", "NUM_THREAD_FULL"),
    ("COMPUTE_NUM_THREAD_Y", "NUM_THREAD_FULL"), ("COMPUTE_NUM_THREAD_Z", "NUM_THREAD_FULL"),
    ("COMPUTE_DISPATCH_SCRATCH_BASE_HI", "DATA"),
]
# COMPUTE_DESTINATION_EN_SEn alias COMPUTE_STATIC_THREAD_MGMT_SEn (same index); the decoder
# shows the STATIC_THREAD_MGMT name, which the MQD uses (v11_structs.h: compute_static_thread_mgmt_se0).
SH_NAME_ALIASES = re.compile(r"regCOMPUTE_DESTINATION_EN_SE\d")

# SDMA packets the encoder and decoder know: (packet name in the header, OP constant, SUB_OP constant).
SDMA_PACKETS = [
    ("NOP", "SDMA_OP_NOP", None),
    ("COPY_LINEAR", "SDMA_OP_COPY", "SDMA_SUBOP_COPY_LINEAR"),
    ("WRITE_UNTILED", "SDMA_OP_WRITE", "SDMA_SUBOP_WRITE_LINEAR"),
    ("INDIRECT", "SDMA_OP_INDIRECT", None),
    ("FENCE", "SDMA_OP_FENCE", None),
    ("TRAP", "SDMA_OP_TRAP", None),
    ("POLL_REGMEM", "SDMA_OP_POLL_REGMEM", None),
    ("CONSTANT_FILL", "SDMA_OP_CONST_FILL", None),
    ("TIMESTAMP_SET", "SDMA_OP_TIMESTAMP", "SDMA_SUBOP_TIMESTAMP_SET"),
    ("TIMESTAMP_GET", "SDMA_OP_TIMESTAMP", "SDMA_SUBOP_TIMESTAMP_GET"),
    ("TIMESTAMP_GET_GLOBAL", "SDMA_OP_TIMESTAMP", "SDMA_SUBOP_TIMESTAMP_GET_GLOBAL"),
    ("GCR_REQ", "SDMA_OP_GCR_REQ", None),
]

NUM = r"(0x[0-9a-fA-F]+|\d+)"


def fail(msg):
    sys.exit(f"gen_amd_regs: {msg}")


# --------------------------------------------------------------------------------- input
def extract_inputs(tarball, dest):
    """Extracts the input files from a linux-source tarball into dest; returns the tree root."""
    wanted = set(INPUTS.values())
    found = {}
    with tarfile.open(tarball, "r|*") as tar:
        for member in tar:
            parts = member.name.split("/", 1)
            if len(parts) == 2 and parts[1] in wanted and member.isfile():
                data = tar.extractfile(member).read()
                path = os.path.join(dest, parts[1])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as out:
                    out.write(data)
                found[parts[1]] = True
                if len(found) == len(wanted):
                    break
    missing = wanted - set(found)
    if missing:
        fail(f"{tarball} lacks {sorted(missing)}")
    return dest


class Source:
    """The input files of one kernel tree, with their text, line numbers and hashes."""

    def __init__(self, tree):
        self.tree = tree
        self.text = {}
        for key, rel in INPUTS.items():
            path = os.path.join(tree, rel)
            if key == "makefile" and not os.path.isfile(path):
                self.text[key] = ""  # a partial tree: the banner then names no kernel version
                continue
            if not os.path.isfile(path):
                fail(f"missing {path} (is --linux-src the root of a kernel tree?)")
            with open(path, encoding="utf-8", errors="replace") as f:
                self.text[key] = f.read()
        self.version = self.kernel_version()

    def kernel_version(self):
        fields = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)", self.text["makefile"], re.M))
        if len(fields) != 3:
            return "(version unknown: no top-level Makefile)"
        return f"{fields['VERSION']}.{fields['PATCHLEVEL']}.{fields['SUBLEVEL']}"

    def sha256(self, key):
        return hashlib.sha256(self.text[key].encode("utf-8", errors="replace")).hexdigest()[:16]

    def lines(self, key):
        return self.text[key].splitlines()


def debian_version():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "linux-source-6.12"],
                             capture_output=True, text=True, check=False)
        return out.stdout.strip() or None
    except OSError:
        return None


# --------------------------------------------------------------------------------- parsing
def parse_offsets(text):
    """regNAME -> (offset, base_index) from an <ip>_offset.h."""
    values, bases = {}, {}
    for name, value in re.findall(r"^#define\s+(reg\w+)\s+" + NUM + r"\s*$", text, re.M):
        if name.endswith("_BASE_IDX"):
            bases[name[: -len("_BASE_IDX")]] = int(value, 0)
        else:
            values[name] = int(value, 0)
    # A few registers (regGFX_IMU_FUSESTRAP) have no _BASE_IDX; none of them is curated.
    return {name: (offset, bases[name]) for name, offset in values.items() if name in bases}


def parse_sh_mask(text):
    """REG -> [(field, shift, mask)] in header order, from an <ip>_sh_mask.h.

    A field with a SHIFT but no MASK (SQ_CONFIG__DISABLE_SGPR_RD_KILL in gc_11_0_0) is recorded with
    mask None; fields_of() refuses it only if a curated register has one.
    """
    shifts, masks, order = {}, {}, []
    for name, value in re.findall(r"^#define\s+(\w+?__\w+?)__SHIFT\s+" + NUM + r"\s*$", text, re.M):
        shifts[name] = int(value, 0)
        order.append(name)
    for name, value in re.findall(r"^#define\s+(\w+?__\w+?)_MASK\s+" + NUM + r"U?L?\s*$", text, re.M):
        masks[name] = int(value, 0)
    fields = {}
    for key in order:
        reg, field = key.split("__", 1)
        entry = (field, shifts[key], masks.get(key))
        if entry not in fields.setdefault(reg, []):
            fields[reg].append(entry)
    return fields


def fields_of(masks, reg, where, skipped=None):
    """The checked fields of one curated register (name without "reg").

    The kernel headers define a few fields with a SHIFT but no MASK (MMVM_L2_CNTL5 in mmhub_4_1_0);
    those are left out and listed in `skipped`, since no width can be invented for them.
    """
    good = []
    for field, shift, mask in masks.get(reg, []):
        if mask is None:
            if skipped is None:
                fail(f"{where}: {reg}__{field} has a SHIFT but no MASK")
            skipped.append(f"{reg}__{field}")
            continue
        if mask == 0 or (mask >> shift) & 1 == 0 or mask & ((1 << shift) - 1):
            fail(f"{where}: {reg}__{field}: mask 0x{mask:x} does not start at shift {shift}")
        good.append((field, shift, mask))
    return good


def select_regs(patterns, versions, family):
    """Names (with "reg") chosen by the curated patterns, per version."""
    compiled = [(p, re.compile("reg" + p)) for p in patterns]
    chosen = {v: set() for v in versions}
    for pattern, rx in compiled:
        hits = 0
        for v, regs in versions.items():
            for name in regs:
                if rx.fullmatch(name):
                    chosen[v].add(name)
                    hits += 1
        if hits == 0:
            fail(f"{family}: curated register {pattern!r} matches nothing in {sorted(versions)}")
    return chosen


def parse_ip_bases(text, ip):
    bases = []
    for seg in range(6):
        m = re.search(rf"^#define\s+{ip}_BASE__INST0_SEG{seg}\s+" + NUM, text, re.M)
        if not m:
            fail(f"navi10_ip_offset.h has no {ip}_BASE__INST0_SEG{seg}")
        bases.append(int(m.group(1), 0))
    while bases and bases[-1] == 0:
        bases.pop()
    return bases


def parse_nvd(text):
    """PM4 opcodes, shift macros ((x) << N), constant macros (A << N) and plain numbers of nvd.h."""
    opcodes, shifts, consts = [], [], []
    for line in text.splitlines():
        m = re.match(r"^#\s*define\s+(PACKET3_\w+)\s+" + NUM + r"\s*$", line)
        if m and not re.search(r"_REG_(START|END)$", m.group(1)):
            opcodes.append((m.group(1), int(m.group(2), 0)))
            continue
        m = re.match(r"^#\s*define\s+(\w+)\s+" + NUM + r"\s*$", line)
        if m:
            consts.append((m.group(1), int(m.group(2), 0)))
            continue
        m = re.match(r"^#\s*define\s+(\w+)\(x\)\s+\(\(x\)\s*<<\s*(\d+)\)\s*$", line)
        if m:
            shifts.append((m.group(1), int(m.group(2))))
            continue
        m = re.match(r"^#\s*define\s+(\w+)\s+\(" + NUM + r"\s*<<\s*(\d+)\)", line)
        if m:
            consts.append((m.group(1), int(m.group(2), 0) << int(m.group(3))))
    if len(opcodes) < 50:
        fail("nvd.h: found too few PACKET3 opcodes; has the header changed shape?")
    return opcodes, shifts, consts


def parse_enum(text, enum):
    m = re.search(rf"typedef enum {enum} \{{(.*?)\}} {enum};", text, re.S)
    if not m:
        fail(f"enum {enum} not found")
    return [(n, int(v, 0)) for n, v in re.findall(r"^(\w+)\s*=\s*" + NUM + ",", m.group(1), re.M)]


def parse_sdma(text):
    """SDMA_OP_*/SDMA_SUBOP_* values and, per packet, [(dword, name, field, shift, mask)]."""
    ops = [(n, int(v, 0)) for n, v in re.findall(r"^#define\s+(SDMA_(?:SUB)?OP_\w+)\s+" + NUM + r"\s*$", text, re.M)]
    packets, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^\*\* Definitions for SDMA_PKT_(\w+) packet", line)
        if m:
            current = m.group(1)
            packets[current] = []
            continue
        m = re.match(r"^#define\s+SDMA_PKT_(\w+)_offset\s+(\d+)", line)
        if m and current:
            rest = m.group(1)
            if not rest.startswith(current + "_"):
                fail(f"SDMA_PKT_{rest} outside its packet block {current}")
            word_field = rest[len(current) + 1:]
            mw = re.match(r"^([A-Z0-9_]+?)_([a-z][a-z0-9_]*)$", word_field)
            if not mw:
                fail(f"cannot split SDMA_PKT_{rest} into word and field")
            packets[current].append([int(m.group(2)), mw.group(1), mw.group(2), None, None])
    for pkt, fields in packets.items():
        for f in fields:
            stem = f"SDMA_PKT_{pkt}_{f[1]}_{f[2]}"
            mm = re.search(rf"^#define\s+{stem}_mask\s+" + NUM, text, re.M)
            ms = re.search(rf"^#define\s+{stem}_shift\s+(\d+)", text, re.M)
            if not (mm and ms):
                fail(f"{stem} lacks _mask or _shift")
            f[3], f[4] = int(ms.group(1)), int(mm.group(1), 0)
    return ops, packets


# --------------------------------------------------------------------------------- output
def banner(src, file_line, what, inputs, deb):
    """The opening comment: what the file is, its sources with hashes, and how to regenerate it."""
    pkg = f" (Debian package linux-source-6.12 {deb})" if deb else " (Debian package linux-source-6.12)"
    out = [f"// {file_line}", "//", f"// GENERATED by scripts/gen_amd_regs.py from Linux {src.version}{pkg}:"]
    for key in inputs:
        out.append(f"//   {INPUTS[key]}  sha256:{src.sha256(key)}")
    out += [f"// {line}" for line in what] + [
            f"// Regenerate: {REGEN}",
            "// Do not edit. Generated tables are exempt from the file-size budget (docs/architecture.md, Conventions).",
            "#pragma once"]
    return out


def hx(v, width=8):
    return f"0x{v:0{width}X}" if width else f"0x{v:X}"


def table_lines(ns, version, regs, parsed, masks, where):
    """The fields[], regs[] and table of one reg_table, for the given sorted register names."""
    field_lines, reg_lines, skipped = [], [], []
    for reg in regs:
        offset, base = parsed[reg]
        fields = fields_of(masks, reg[3:], where, skipped)
        first = len(field_lines)
        for fname, shift, mask in fields:
            field_lines.append(f'    {{"{fname}", {hx(mask)}, {shift}}},')
        if fields:
            field_lines[first] += f"  // {reg}"
        reg_lines.append(f'    {{"{reg}", {hx(offset, 4)}, {base}, {first}, {len(fields)}}},')
    lines = [f"namespace {ns} {{", ""]
    if skipped:
        lines += ["// Left out: the header gives these fields a SHIFT but no MASK:"]
        lines += [f"//   {f}" for f in skipped]
        lines += [""]
    lines += [f"inline constexpr std::size_t reg_count = {len(regs)};",
              f"inline constexpr std::size_t field_count = {len(field_lines)};", "",
              "// {name, mask in place, shift}, grouped by register in the order of `regs`.",
              "inline constexpr tg::queue::reg_field fields[] = {"] + field_lines + ["};", "",
              "// {name, offset, base index (segment), first field, field count}, sorted by name.",
              "inline constexpr tg::queue::reg_info regs[] = {"] + reg_lines + ["};", "",
              "static_assert(std::size(regs) == reg_count);",
              "static_assert(std::size(fields) == field_count);", "",
              f'inline constexpr tg::queue::reg_table table{{"{version}", regs, fields}};',
              "static_assert(tg::queue::is_well_formed(table));", "",
              f"}}  // namespace {ns}", ""]
    return lines


def gen_reg_file(src, deb, name, title, patterns, ip, versions):
    parsed = {v: parse_offsets(src.text[v + "_offset"]) for v, _ in versions}
    masks = {v: parse_sh_mask(src.text[v + "_sh_mask"]) for v, _ in versions}
    chosen = select_regs(patterns, parsed, title)
    bases = parse_ip_bases(src.text["navi10_ip"], ip)
    outputs = {}
    for version, vtitle in versions:
        lines = banner(src, f"{version}.hpp: {vtitle} register table: offset, segment and fields of the registers tg uses.",
                       ["The register list is curated in the generator (GC_REGS, MMHUB_REGS, OSSSYS_REGS)."],
                       [version + "_offset", version + "_sh_mask", "navi10_ip"], deb)
        lines += ["#include <cstddef>", "#include <cstdint>", "#include <iterator>", "",
                  '#include "runtime/queue/reg_table.hpp"', "",
                  f"// {ip}_BASE__INST0_SEG* from navi10_ip_offset.h: the usual navi-family IP bases. A driver",
                  "// takes the real ones from the IP discovery table; these are for logs and tests.",
                  f"namespace tg::amd::regs::{version} {{",
                  f"inline constexpr std::uint32_t navi10_bases[] = {{{', '.join(hx(b) for b in bases)}}};",
                  f"}}  // namespace tg::amd::regs::{version}", ""]
        lines += table_lines(f"tg::amd::regs::{version}", version, sorted(chosen[version]), parsed[version],
                             masks[version], version)
        outputs[f"drivers/amd/regs/{version}.hpp"] = "\n".join(lines)
    return outputs, parsed, masks, chosen


def gen_pm4(src, deb, gc_parsed, gc_masks, gc_chosen):
    opcodes, shifts, consts = parse_nvd(src.text["nvd"])
    const_map = dict(consts)
    # The headers the kernel's own gfx11/gfx12 code builds its packets from.
    for key, header in (("gfx_v11_c", "nvd.h"), ("gfx_v11_c", "navi10_enum.h"), ("gfx_v12_c", "nvd.h"),
                        ("gfx_v12_c", "soc24_enum.h")):
        if f'#include "{header}"' not in src.text[key]:
            fail(f"{INPUTS[key]} no longer includes {header}")
    events11 = parse_enum(src.text["navi10_enum"], "VGT_EVENT_TYPE")
    events12 = dict(parse_enum(src.text["soc24_enum"], "VGT_EVENT_TYPE"))
    events = [(n, v) for n, v in events11 if not n.startswith("Reserved") and events12.get(n) == v]
    for needed in ("CS_PARTIAL_FLUSH", "CACHE_FLUSH_AND_INV_TS_EVENT", "BOTTOM_OF_PIPE_TS"):
        if needed not in dict(events):
            fail(f"VGT event {needed} differs between navi10_enum.h and soc24_enum.h")

    gc_bases = parse_ip_bases(src.text["navi10_ip"], "GC")
    windows = [(const_map["PACKET3_SET_SH_REG_START"], const_map["PACKET3_SET_SH_REG_END"]),
               (const_map["PACKET3_SET_UCONFIG_REG_START"], const_map["PACKET3_SET_UCONFIG_REG_END"])]
    queue_regs = {}
    for version in ("gc_11_0_0", "gc_12_0_0"):
        regs = []
        for reg in gc_chosen[version]:
            offset, base = gc_parsed[version][reg]
            if any(lo <= gc_bases[base] + offset < hi for lo, hi in windows) and not SH_NAME_ALIASES.fullmatch(reg):
                regs.append(reg)
        queue_regs[version] = sorted(regs)
        for reg, field in PM4_FIELDS:
            if not any(f[0] == field for f in fields_of(gc_masks[version], reg, version)):
                fail(f"{version}: the dispatch sequence needs {reg}__{field}")

    lines = banner(src, "pm4_gen.hpp: PM4 opcodes, packet field macros, VGT events and queue-writable GC registers.",
                   ["Opcodes and events are shared by gfx11 and gfx12 (the generator fails where they differ);",
                    "register fields differ (COMPUTE_NUM_THREAD_X, COMPUTE_TMPRING_SIZE), so those come per version."],
                   ["nvd", "gfx_v11_c", "gfx_v12_c", "navi10_enum", "soc24_enum", "gc_11_0_0_offset", "gc_12_0_0_offset",
                    "gc_11_0_0_sh_mask", "gc_12_0_0_sh_mask", "navi10_ip"], deb)
    lines += ["#include <cstddef>", "#include <cstdint>", "#include <iterator>", "#include <string_view>", "",
              '#include "runtime/queue/reg_table.hpp"', "", "namespace tg::queue::pm4 {", "",
              "struct named_value {", "  std::string_view name;", "  std::uint32_t value;", "};", "",
              "// A field macro of nvd.h, `#define NAME(x) ((x) << shift)`; NAME(v) reads as in the kernel.",
              "struct shift_macro {", "  unsigned shift;",
              "  constexpr std::uint32_t operator()(std::uint32_t x) const { return x << shift; }", "};", "",
              "// ---- nvd.h: packet type 3 opcodes", ""]
    for n, v in opcodes:
        lines.append(f"inline constexpr std::uint8_t {n} = {hx(v, 2)};")
    lines += ["", f"inline constexpr std::size_t packet3_opcode_count = {len(opcodes)};",
              "// In header order; where two names share a value (PACKET3_COND_INDIRECT_BUFFER) the first wins.",
              "inline constexpr named_value packet3_opcodes[] = {"]
    lines += [f'    {{"{n}", {hx(v, 2)}}},' for n, v in opcodes]
    lines += ["};", "static_assert(std::size(packet3_opcodes) == packet3_opcode_count);", "",
              "// ---- nvd.h: field macros `NAME(x) ((x) << N)`", ""]
    lines += [f"inline constexpr shift_macro {n}{{{s}}};" for n, s in shifts]
    lines += ["", "// ---- nvd.h: single bits, constants and register windows", ""]
    for n, v in consts:
        if n.startswith("PACKET_TYPE") or n in ("CP_PACKET2", "CE_PARTITION_BASE") or n.startswith("PACKET2_"):
            continue
        lines.append(f"inline constexpr std::uint32_t {n} = {hx(v)};")
    lines += ["", "// ---- VGT_EVENT_TYPE (navi10_enum.h, which gfx_v11_0.c includes; entries whose soc24_enum.h value,",
              "// which gfx_v12_0.c includes, differs are left out)", "",
              f"inline constexpr std::size_t vgt_event_count = {len(events)};", "inline constexpr named_value vgt_events[] = {"]
    lines += [f'    {{"{n}", {hx(v, 2)}}},' for n, v in events]
    lines += ["};", "static_assert(std::size(vgt_events) == vgt_event_count);"]
    for n in ("CS_PARTIAL_FLUSH", "CACHE_FLUSH_AND_INV_TS_EVENT", "BOTTOM_OF_PIPE_TS"):
        lines.append(f"inline constexpr std::uint8_t {n} = {hx(dict(events)[n], 2)};")
    lines += ["", "// GC_BASE__INST0_SEG0/1 (navi10_ip_offset.h): the CP addresses SET_SH_REG and SET_UCONFIG_REG",
              "// registers by index = base of the register's segment + its offset.",
              f"inline constexpr std::uint32_t gc_bases[] = {{{', '.join(hx(b) for b in gc_bases)}}};", "",
              "}  // namespace tg::queue::pm4", "",
              "// ---- The curated GC registers inside the SH and UCONFIG windows, per GC version.", ""]
    for version in ("gc_11_0_0", "gc_12_0_0"):
        lines += table_lines(f"tg::queue::pm4::{version}", version, queue_regs[version], gc_parsed[version],
                             gc_masks[version], version)
    return {"runtime/queue/pm4_gen.hpp": "\n".join(lines)}


def gen_sdma(src, deb):
    if '#include "sdma_v6_0_0_pkt_open.h"' not in src.text["sdma_v7_c"]:
        fail("sdma_v7_0.c no longer includes sdma_v6_0_0_pkt_open.h; SDMA 7 needs its own table")
    ops, packets = parse_sdma(src.text["sdma_pkt"])
    opmap = dict(ops)
    lines = banner(src, "sdma_gen.hpp: SDMA 6/7 opcodes and packet field layouts.",
                   ["sdma_v7_0.c includes sdma_v6_0_0_pkt_open.h, so SDMA 6.x and 7.x share these packets."],
                   ["sdma_pkt", "sdma_v7_c"], deb)
    lines += ["#include <cstddef>", "#include <cstdint>", "#include <iterator>", "#include <span>",
              "#include <string_view>", "", "namespace tg::queue::sdma {", "",
              "// One field of one packet: SDMA_PKT_<packet>_<word>_<field>_{offset,mask,shift}.",
              "struct packet_field {", "  std::string_view word;   // the header's word name, e.g. COUNT",
              "  std::string_view name;   // the header's field name, e.g. count",
              "  std::uint8_t dword;      // _offset: dword index inside the packet",
              "  std::uint8_t shift;      // _shift",
              "  std::uint32_t mask;      // _mask, not shifted (the largest value the field holds)",
              "  constexpr std::uint32_t get(std::uint32_t word_value) const { return (word_value >> shift) & mask; }",
              "};", "",
              "struct packet_layout {", "  std::string_view name;   // e.g. COPY_LINEAR (SDMA_PKT_COPY_LINEAR)",
              "  std::uint8_t op;", "  std::int16_t sub_op;     // -1: any sub-op selects this packet",
              "  std::uint8_t dwords;     // fixed length; WRITE_UNTILED and NOP add a counted tail from DATA0",
              "  std::span<const packet_field> fields;", "};", "",
              "// ---- SDMA_OP_* and SDMA_SUBOP_*", ""]
    lines += [f"inline constexpr std::uint8_t {n} = {v};" for n, v in ops]
    lines += [""]
    layout_lines = []
    for pkt, op_name, sub_name in SDMA_PACKETS:
        if pkt not in packets:
            fail(f"SDMA_PKT_{pkt} not in sdma_v6_0_0_pkt_open.h")
        fields = packets[pkt]
        lines.append(f"// ---- SDMA_PKT_{pkt}")
        for dword, word, field, shift, mask in fields:
            lines.append(f'inline constexpr packet_field SDMA_PKT_{pkt}_{word}_{field}{{"{word}", "{field}", {dword}, {shift}, {hx(mask)}}};')
        names = ", ".join(f"SDMA_PKT_{pkt}_{w}_{f}" for _, w, f, _, _ in fields)
        lines.append(f"inline constexpr packet_field SDMA_PKT_{pkt}_fields[] = {{{names}}};")
        dwords = max(f[0] for f in fields) + 1
        if pkt in ("WRITE_UNTILED", "NOP"):
            dwords -= 1  # DATA0 starts the counted tail (count + 1 data dwords, or count NOPs)
        lines.append(f"inline constexpr std::size_t SDMA_PKT_{pkt}_dwords = {dwords};")
        lines.append("")
        sub = opmap[sub_name] if sub_name else -1
        layout_lines.append(f'    {{"{pkt}", {op_name}, {sub}, {dwords}, SDMA_PKT_{pkt}_fields}},')
    lines += [f"inline constexpr std::size_t packet_layout_count = {len(SDMA_PACKETS)};",
              "inline constexpr packet_layout packet_layouts[] = {"] + layout_lines + [
              "};", "static_assert(std::size(packet_layouts) == packet_layout_count);", "",
              "}  // namespace tg::queue::sdma", ""]
    return {"runtime/queue/sdma_gen.hpp": "\n".join(lines)}


def generate(src, deb):
    outputs = {}
    gc = None
    for name, title, patterns, ip, versions in REG_FILES:
        files, parsed, masks, chosen = gen_reg_file(src, deb, name, title, patterns, ip, versions)
        outputs.update(files)
        if name == "gc":
            gc = (parsed, masks, chosen)
    outputs.update(gen_pm4(src, deb, *gc))
    outputs.update(gen_sdma(src, deb))
    return outputs


def body(text):
    """A generated file without its banner (everything from #pragma once on)."""
    return text[text.find("#pragma once"):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--linux-src", default=os.environ.get("TG_LINUX_SRC") or None,
                    help="root of an extracted kernel tree (default: $TG_LINUX_SRC)")
    ap.add_argument("--tarball", default=os.environ.get("TG_LINUX_TARBALL") or DEFAULT_TARBALL,
                    help="linux-source tarball (default: $TG_LINUX_TARBALL or %(default)s)")
    ap.add_argument("--debian-version", help="package version for the banner (default: ask dpkg-query)")
    ap.add_argument("--out", default=ROOT, help="repository root to write into (default: this checkout)")
    ap.add_argument("--check", action="store_true",
                    help="compare the tables (not the banners) with the files under --out; write nothing; "
                         "exit 77 when no kernel source is installed")
    args = ap.parse_args()
    if not args.linux_src and not os.path.isfile(args.tarball):
        if args.check:
            print(f"skipped: {args.tarball} not found and TG_LINUX_SRC not set", file=sys.stderr)
            return 77
        fail(f"{args.tarball} not found: apt-get install linux-source-6.12, or pass --linux-src")
    deb = args.debian_version or debian_version()
    with tempfile.TemporaryDirectory(prefix="tg-linux-") as tmp:
        tree = args.linux_src or extract_inputs(args.tarball, tmp)
        outputs = generate(Source(tree), deb)
    stale = []
    for rel, text in sorted(outputs.items()):
        path = os.path.join(args.out, rel)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if body(f.read()) != body(text):
                        stale.append(rel)
            except FileNotFoundError:
                stale.append(rel)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {rel} ({text.count(chr(10))} lines)")
    if stale:
        print("out of date (regenerate with: " + REGEN + "): " + ", ".join(stale), file=sys.stderr)
        return 1
    if args.check:
        print(f"{len(outputs)} generated files match the headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
