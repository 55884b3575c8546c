#!/usr/bin/env python3
"""tg_amd_cli_test.py: runs the `tg-amd` binary as a user would, on the emulated GPU (PCI and USB)
and on this machine (which has no AMD GPU), and checks what it prints and its exit codes.

Usage: tg_amd_cli_test.py path/to/tg-amd
"""
import subprocess, sys

tool = sys.argv[1]
failures = []


def run(*args):
    p = subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expect(name, cond, detail):
    if not cond:
        failures.append(f"{name}: {detail}")


rc, out, err = run("--help")
expect("help", rc == 0 and "copy-bench" in out and "AMD:USB:3-2" in out, out + err)

rc, out, err = run("--emulate", "gfx11", "list")
expect("list pci", rc == 0 and "AMD:0  PCI  pci:0000:c3:00.0" in out and "gfx1100" in out, out + err)

rc, out, err = run("--emulate", "gfx12", "--via", "usb", "list")
expect("list usb", rc == 0 and "AMD:0  USB  usb:1-2" in out, out + err)

rc, out, err = run("--emulate", "gfx12", "--via", "usb", "info", "AMD:USB:0")
expect("info usb", rc == 0 and "usb:1-2: gfx1200, 1 GiB of VRAM" in out and "MP0      #0  14.0.2" in out
       and "BAR0 VRAM       0x000800000000" in out, out + err)

rc, out, err = run("--emulate", "gfx11", "info", "AMD:USB")
expect("info missing bus", rc == 1 and "no AMD GPU found on USB" in err, out + err)

rc, out, err = run("--emulate", "gfx12", "--via", "usb", "copy-bench", "--size", "8", "--repeat", "1")
expect("copy-bench usb", rc == 0 and "host -> VRAM:" in out and "verified" in out and "full boot" in out, out + err)

rc, out, err = run("--emulate", "gfx11", "-v", "reset")
expect("reset", rc == 0 and "pci:0000:c3:00.0: done" in out and "am: ready" in err, out + err)

rc, out, err = run("--emulate", "gfx13", "list")
expect("bad emulate", rc == 1 and "choose gfx11" in err, out + err)

rc, out, err = run("info", "AMD:PCI:0000:99:00.0")
expect("no device here", rc == 1 and "no AMD GPU" in err, out + err)

for f in failures:
    print("FAIL", f)
print(f"tg-amd CLI: {9 - len(failures)} of 9 checks passed")
sys.exit(1 if failures else 0)
