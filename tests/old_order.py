#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A call in 0.2's parameter order does not compile; in 0.3's it does.

  old_order.py ROOT LANG COMPILER [ARGS...]

For each function 0.3 reordered (CHANGES), compiles a file holding one call
in 0.2's order and one holding the same call in 0.3's, with COMPILER as a
user would call it: LANG c is -std=c11, c++ is -std=c++17, and no warning
option, so -Wint-conversion and -Wincompatible-pointer-types stay
warnings. The old call must fail, the new one compile. TAP, one line a
function.
"""
import os
import subprocess
import sys
import tempfile

PRELUDE = """#include "ib_tables.h"
struct ibk_gid gid; uint8_t mac[6]; uint8_t v[32]; uint16_t idx[32];
const void *hdrs[32]; ibk_pkey_t pkeys[32]; ibk_guid_t guids[8];
uint8_t data[64]; uint8_t notice[64]; uint8_t smp[256];
struct ibk_gid_entry entries[4]; uint32_t gen; struct ibk_mem_attr o, mr;
struct ibk_mem_qp qp; struct ibk_trap_256 t256; struct ibk_trap_key tkey;
struct ibk_pkt_headers h; struct ibk_port port; struct ibk_qp_keys qk;
const struct ibk_qp_keys *qps[32]; struct ibk_mr_table mrt;
struct ibk_pkey_table pt; struct ibk_gid_table gt;
void f(void);
void f(void)
{
"""

# function: (0.2's call, 0.3's call)
CALLS = {
    "ibk_gid_set": ("ibk_gid_set(&gid, 1, 2);", "ibk_gid_set(1, 2, &gid);"),
    "ibk_gid_set_from_ipv4": ("ibk_gid_set_from_ipv4(&gid, 1);",
                              "ibk_gid_set_from_ipv4(1, &gid);"),
    "ibk_gid_set_from_mac": ("ibk_gid_set_from_mac(&gid, mac);",
                             "ibk_gid_set_from_mac(mac, &gid);"),
    "ibk_pkey_match_burst": ("ibk_pkey_match_burst(0xffff, pkeys, v, 32);",
                             "ibk_pkey_match_burst(0xffff, pkeys, 32, v);"),
    "ibk_rx_ud_burst": ("ibk_rx_ud_burst(0xffff, 1, hdrs, v, 32);",
                        "ibk_rx_ud_burst(0xffff, 1, hdrs, 32, v);"),
    "ibk_port_rx_burst": ("ibk_port_rx_burst(&port, &qk, hdrs, v, 32);",
                          "ibk_port_rx_burst(&port, &qk, hdrs, 32, v);"),
    "ibk_port_rx_mixed": (
        "ibk_port_rx_mixed(&port, qps, hdrs, v, idx, 32);",
        "ibk_port_rx_mixed(&port, qps, hdrs, 32, v, idx);"),
    "ibk_mr_table_check_burst": (
        "ibk_mr_table_check_burst(&mrt, &qp, hdrs, v, 32);",
        "ibk_mr_table_check_burst(&mrt, &qp, hdrs, 32, v);"),
    "ibk_pkey_table_snapshot": (
        "ibk_pkey_table_snapshot(&pt, pkeys, 32, &gen);",
        "ibk_pkey_table_snapshot(&pt, 32, pkeys, &gen);"),
    "ibk_gid_table_snapshot": (
        "ibk_gid_table_snapshot(&gt, entries, 4, &gen);",
        "ibk_gid_table_snapshot(&gt, 4, entries, &gen);"),
    "ibk_pkey_block_encode": ("ibk_pkey_block_encode(data, pkeys);",
                              "ibk_pkey_block_encode(pkeys, data);"),
    "ibk_guid_block_encode": ("ibk_guid_block_encode(data, guids);",
                              "ibk_guid_block_encode(guids, data);"),
    "ibk_notice_init": ("ibk_notice_init(notice, 3, 1, 256, 7);",
                        "ibk_notice_init(3, 1, 256, 7, notice);"),
    "ibk_notice_build_256": ("ibk_notice_build_256(notice, 1, 7, &t256);",
                             "ibk_notice_build_256(1, 7, &t256, notice);"),
    "ibk_notice_build_key_trap": (
        "ibk_notice_build_key_trap(notice, 257, 1, 7, &tkey);",
        "ibk_notice_build_key_trap(257, 1, 7, &tkey, notice);"),
    "ibk_trap_256_from_smp": ("ibk_trap_256_from_smp(&t256, smp, 7);",
                              "ibk_trap_256_from_smp(smp, 7, &t256);"),
    "ibk_trap_key_from_headers": (
        "ibk_trap_key_from_headers(&tkey, 257, &h);",
        "ibk_trap_key_from_headers(&h, 257, &tkey);"),
    "ibk_mem_invalidate": ("ibk_mem_invalidate(&o, 0x100, &mr);",
                           "ibk_mem_invalidate(&o, &mr, 0x100);"),
    "ibk_mem_invalidate_remote": (
        "ibk_mem_invalidate_remote(&o, 0x100, &mr, &qp);",
        "ibk_mem_invalidate_remote(&o, &mr, 0x100, &qp);"),
    "ibk_mem_deregister": ("ibk_mem_deregister(&o, 0x100, &mr);",
                           "ibk_mem_deregister(&o, &mr, 0x100);"),
}


def compiles(cmd, root, lang, body, tmp):
    src = os.path.join(tmp, "call." + ("cpp" if lang == "c++" else "c"))
    with open(src, "w") as f:
        f.write(PRELUDE + "\t" + body + "\n}\n")
    std = "-std=c++17" if lang == "c++" else "-std=c11"
    res = subprocess.run(cmd + [std, "-I", root, "-c", src, "-o",
                                os.path.join(tmp, "call.o")],
                         capture_output=True, text=True)
    return res.returncode == 0, res.stderr


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    root, lang, cmd = argv[1], argv[2], argv[3:]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, (old, new)) in enumerate(CALLS.items(), 1):
            old_ok, _ = compiles(cmd, root, lang, old, tmp)
            new_ok, err = compiles(cmd, root, lang, new, tmp)
            ok = not old_ok and new_ok
            failed += not ok
            print(f"{'ok' if ok else 'not ok'} {i} - {lang}: {name} in 0.2's "
                  f"order {'fails' if not old_ok else 'COMPILES'}, in 0.3's "
                  f"{'compiles' if new_ok else 'FAILS'}")
            if not new_ok:
                print("# " + err.strip().replace("\n", "\n# ")[:2000])
    print(f"1..{len(CALLS)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
