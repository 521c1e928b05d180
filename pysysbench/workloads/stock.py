"""Where sysbench finds a script, and whether that file is a stock copy.

A bundled test name (``oltp_read_write``, ``/usr/share/sysbench/oltp_read_write.lua``)
or a 0.5 script path (``tests/db/oltp.lua``) runs natively only while the file
sysbench would run there is the unmodified script the native workload reproduces.
Users edit these files (the TencentDB report ran a modified ``oltp.lua``, the
KunlunBase fork added XA to its ``tests/db/oltp.lua``): a file that exists and
differs from every stock copy, or whose ``oltp_common.lua`` / ``common.lua`` does,
runs through the Lua engine, as sysbench would run it.  A path with no file behind
it (old reports' ``tests/db/oltp.lua``) keeps the native workload: there is nothing
else to run.

Kept free of the Lua engine (no lupa, no ctypes): every native run asks it.
"""

from __future__ import annotations

import os

PKGDATADIRS = ("/usr/share/sysbench", "/usr/local/share/sysbench")

# BLAKE2b-128 of the scripts the native workloads reproduce: sysbench 1.0.20's src/lua/*.lua
# (as the Debian package 1.0.20+ds installs them in /usr/share/sysbench) and its
# tests/include/oltp_legacy/*.lua (the 0.5 scripts as 1.0.20 ships them).
STOCK_DIGESTS = frozenset(
    {
        "94209c13a8a8901dd7fbef748bb5c7dc",  # bulk_insert.lua
        "71bbe3de13128d409061f9b97d8b6484",  # oltp_common.lua
        "f7779b73f1c4fffe6c782027368bd53d",  # oltp_delete.lua
        "19b7c74e1442cb09302f433a914a3d30",  # oltp_insert.lua
        "fd453b65f8246cac774aa15f40acec7f",  # oltp_point_select.lua
        "cce3def28f88f0fd14122cefd8634ac9",  # oltp_read_only.lua
        "bfcb9bb18b9f1d9933ed479a66025eee",  # oltp_read_write.lua
        "92c0d27644a469aba48e01911ac6933a",  # oltp_update_index.lua
        "6cc16b1a617be5d44f764e6293f4c60b",  # oltp_update_non_index.lua
        "64354b31f09f03ba5776c4a9abb39e26",  # oltp_write_only.lua
        "f6868e63364d16377adf3216265e4d4a",  # select_random_points.lua
        "8646b5ad36b8575ccc98832ff170e136",  # select_random_ranges.lua
        "42db85bb1ec969a5b1fdc7d2429fffb4",  # oltp_legacy/bulk_insert.lua
        "6266b37325add833d89821716dac09fd",  # oltp_legacy/common.lua
        "89792162cb0c5bf87f4e67b999ed0f28",  # oltp_legacy/delete.lua
        "d0d66dba7781fac4b2ff8cb3dee8abbc",  # oltp_legacy/insert.lua
        "2c72828ecb48dbb82e58843900871242",  # oltp_legacy/oltp.lua
        "373abe4cd5cd95403831d090f1ec6d3e",  # oltp_legacy/oltp_simple.lua
        "40792c3bc7c1366d91f5470e6dd135c9",  # oltp_legacy/parallel_prepare.lua
        "9df78196c5dfecbe3050eab20c330e32",  # oltp_legacy/select.lua
        "b7b79b18ffea6206dfccc6ec7d8d327f",  # oltp_legacy/select_random_points.lua
        "3907ba5ba26ea8bbfae863a3dbcdbf98",  # oltp_legacy/select_random_ranges.lua
        "024b9097a61a55b58052f1f260cde8ae",  # oltp_legacy/update_index.lua
        "b22ad6d9e12a107f4a67e92f9be1c50b",  # oltp_legacy/update_non_index.lua
    }
)


# the bundled names with a script of the sysbench package behind them (cpu, fileio, ... have none)
SCRIPT_NAMES = frozenset(
    {
        "bulk_insert",
        "oltp_common",
        "oltp_delete",
        "oltp_insert",
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_write_only",
        "select_random_points",
        "select_random_ranges",
    }
)


def package_path(env: dict[str, str] | None = None) -> tuple[str, str]:
    """sysbench's package.path and package.cpath (LUA_PATH / LUA_CPATH honoured, ';;' = default)."""
    env = os.environ if env is None else env
    home = env.get("HOME")
    pkgdata = next((d for d in PKGDATADIRS if os.path.isdir(d)), PKGDATADIRS[0])
    path = ["./?.lua", "./?/init.lua", "./src/lua/?.lua"]
    cpath = ["./?.so"]
    if home is not None:
        path += [
            f"{home}/.luarocks/share/lua/5.1/?.lua",
            f"{home}/.luarocks/share/lua/5.1/?/init.lua",
            f"{home}/.luarocks/share/lua/?.lua",
            f"{home}/.luarocks/share/lua/?/init.lua",
        ]
        cpath += [f"{home}/.luarocks/lib/lua/5.1/?.so", f"{home}/.luarocks/lib/lua/?.so"]
    path += ["/usr/local/share/lua/5.1/?.lua", "/usr/share/lua/5.1/?.lua", f"{pkgdata}/?.lua"]
    cpath += ["/usr/local/lib/lua/5.1/?.so", "/usr/lib/lua/5.1/?.so", "/usr/lib/x86_64-linux-gnu/sysbench"]
    default, cdefault = ";".join(path) + ";", ";".join(cpath) + ";"
    return _override(env.get("LUA_PATH"), default), _override(env.get("LUA_CPATH"), cdefault)


def _override(value: str | None, default: str) -> str:
    if value is None:
        return default
    return value.replace(";;", ";" + default + ";")


def find_module(name: str) -> str | None:
    """The file ``require(name)`` would load along sysbench's package.path, or None."""
    path, _ = package_path()
    sub = name.replace(".", "/")
    for template in path.split(";"):
        if template and os.path.isfile(template.replace("?", sub)):
            return template.replace("?", sub)
    return None


def script_file(name: str) -> str | None:
    """The file sysbench runs for test ``name`` (a path, else a module on the Lua path), or None."""
    if os.path.isfile(name):
        return name
    if name.endswith(".lua") or os.sep in name:
        return None
    return find_module(name)


def digest(path: str) -> str | None:
    """The file's BLAKE2b-128 (hex), or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        from _blake2 import blake2b  # hashlib would load OpenSSL: milliseconds of every native start
    except ImportError:  # pragma: no cover - a CPython built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=16).hexdigest()


def modified(files: list[str | None]) -> str | None:
    """The first of ``files`` that exists and is no stock copy (None: all stock or absent)."""
    for path in files:
        if path is not None and os.path.isfile(path) and digest(path) not in STOCK_DIGESTS:
            return path
    return None


def edited_bundled(name: str) -> str | None:
    """For a bundled 1.0 test name: the edited file sysbench would run (the script, or the
    ``oltp_common.lua`` an ``oltp_*`` script requires), or None when both are stock or absent."""
    stem = os.path.basename(name).removesuffix(".lua")
    if stem not in SCRIPT_NAMES:
        return None
    script = script_file(name)
    if script is None:
        return None
    files = [script]
    if stem.startswith("oltp_") and stem != "oltp_common":
        files.append(find_module("oltp_common"))
    return modified(files)


def edited_legacy(name: str) -> str | None:
    """For a 0.5 script path: the edited file (the script, or the ``common.lua`` beside it that
    it runs with ``dofile``), or None when both are stock or the script is not on disk."""
    if not os.path.isfile(name):
        return None
    return modified([name, os.path.join(os.path.dirname(name), "common.lua")])
