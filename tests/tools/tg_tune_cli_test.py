#!/usr/bin/env python3
"""tg_tune_cli_test.py: runs `tg-tune` as a user would against a cache in a temporary folder
(TG_CACHE): --help, --path, --list and --clear of a missing, a filled and a foreign file.

Usage: tg_tune_cli_test.py path/to/tg-tune
"""
import os, sqlite3, subprocess, sys, tempfile

tool = sys.argv[1]
failures = []


def run(cache, *args):
    env = dict(os.environ, TG_CACHE=cache)
    p = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60, env=env)
    return p.returncode, p.stdout, p.stderr


def expect(name, cond, detail):
    if not cond:
        failures.append(f"{name}: {detail}")


with tempfile.TemporaryDirectory() as folder:
    cache = os.path.join(folder, "tuning.db")
    rc, out, err = run(cache, "--help")
    expect("help", rc == 0 and "--clear" in out and "TG_CACHE" in out, out + err)
    rc, out, err = run(cache, "--path")
    expect("path", rc == 0 and out.strip() == cache, out + err)
    rc, out, err = run(cache, "--clear")
    expect("clear missing", rc == 0 and "no tuning cache" in out and not os.path.exists(cache), out + err)
    rc, out, err = run(cache, "--bogus")
    expect("bad argument", rc == 2 and "usage:" in err, out + err)

    # A cache as tg writes it (tuning_cache.cpp's schema, application_id and version).
    db = sqlite3.connect(cache)
    db.execute("CREATE TABLE tuning (ast_hash TEXT NOT NULL, target TEXT NOT NULL, opts_version INTEGER NOT NULL,"
               " opts TEXT NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (ast_hash, target, opts_version))")
    db.execute("INSERT INTO tuning VALUES ('00000000000000ab', 'CPU avx2 znver3 0', 1, 'upcast=4,16 lanes=1', 0.002)")
    db.execute("PRAGMA application_id = 1952937077")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    rc, out, err = run(cache, "--list")
    expect("list", rc == 0 and "00000000000000ab  CPU avx2 znver3 0  v1  upcast=4,16 lanes=1  2.000 ms" in out, out + err)
    rc, out, err = run(cache, "--clear")
    expect("clear", rc == 0 and "1 entries removed" in out, out + err)
    rc, out, err = run(cache, "--list")
    expect("list after clear", rc == 0 and out == "", out + err)

    foreign = os.path.join(folder, "other.db")
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE notes (x TEXT)")
    db.commit()
    db.close()
    before = open(foreign, "rb").read()
    rc, out, err = run(foreign, "--clear")
    expect("clear foreign", rc == 0 and "another program" in err and open(foreign, "rb").read() == before, out + err)

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
