"""Giving the judge the libraries of :mod:`.libraries` from this machine's local sources: the Rust
crates built, offline, from Debian's packaged sources with the judge's own rustc, and the pinned npm
packages installed from npm's registry. Run once per machine (``make install`` does, never failing
the build): ``python -m referee.verifiers.code.install_libraries``. The judge never builds or fetches
anything while judging.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .libraries import NPM_PACKAGES, RUST_CRATES, built_crates, crates_folder, libraries_home

# The crates' features as the datasets' programs use them (regex without its optional "perf" crates, which Debian
# packages apart).
RUST_DEPENDENCIES = {"rand": '"0.8"', "regex": '{ version = "1", default-features = false, features = ["std", "unicode"] }',
                      "md5": '"0.7"'}
DEBIAN_CRATES = "/usr/share/cargo/registry"
_SECONDS = 600  # for cargo or npm: make install never waits longer on either


def build_rust_crates(rustc: str, rustc_version: str, registry: str = DEBIAN_CRATES) -> str:
    """Build the crates of :data:`RUST_CRATES` that ``registry`` (Debian's packaged sources) holds
    with ``rustc``, offline, into :func:`crates_folder`; a sentence saying what was built or why not.

    Example:
        >>> build_rust_crates("rustc", "rustc 1.0.0 (x)", registry="/no/such/registry")
        'Rust crates: none of rand, regex, md5 in /no/such/registry (install librust-rand-dev librust-regex-dev librust-md5-dev)'
    """
    present = [name for name in RUST_CRATES if any(Path(registry).glob(f"{name}-[0-9]*"))]
    if not present:
        return (f"Rust crates: none of {', '.join(RUST_CRATES)} in {registry} "
                f"(install {' '.join(RUST_CRATES.values())})")
    cargo = shutil.which("cargo", path=os.pathsep.join([str(Path(rustc).parent), os.environ.get("PATH", "")]))
    if cargo is None:
        return "Rust crates: cargo is not installed"
    target = crates_folder(rustc_version)
    if set(built_crates(target)) >= set(present):
        return f"Rust crates: {', '.join(present)} already built in {target}"
    with tempfile.TemporaryDirectory(prefix="referee-crates-") as work:
        project = Path(work)
        (project / "src").mkdir()
        (project / "src" / "lib.rs").write_text("")
        dependencies = "".join(f"{name} = {RUST_DEPENDENCIES[name]}\n" for name in present)
        (project / "Cargo.toml").write_text(f'[package]\nname = "referee-crates"\nversion = "0.0.0"\nedition = "2021"\n\n'
                                            f"[dependencies]\n{dependencies}")
        (project / ".cargo").mkdir()
        (project / ".cargo" / "config.toml").write_text(
            f'[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "{registry}"\n[net]\noffline = true\n')
        environment = {**os.environ, "RUSTC": rustc, "CARGO_HOME": str(project / "home")}
        try:
            done = subprocess.run([cargo, "build", "--release", "--offline"], cwd=project, env=environment,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=_SECONDS)
        except subprocess.TimeoutExpired:
            return f"Rust crates: cargo ran past {_SECONDS} s"
        if done.returncode != 0:
            return f"Rust crates: cargo failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for rlib in (project / "target" / "release" / "deps").glob("*.rlib"):
            shutil.copy2(rlib, target / rlib.name)
    return f"Rust crates: built {', '.join(present)} into {target}"


def install_npm_packages() -> str:
    """``npm install`` the pinned :data:`NPM_PACKAGES` into :func:`libraries_home`; a sentence
    saying what was installed or why not.

    Example (with the packages there already, nothing is fetched):
        >>> home = tempfile.mkdtemp()
        >>> os.makedirs(f"{home}/node_modules/js-md5"); Path(f"{home}/node_modules/js-md5/package.json").write_text("{}")
        2
        >>> os.environ["REFEREE_LIBRARIES"] = home
        >>> install_npm_packages() == f"npm packages: js-md5 already in {home}/node_modules"
        True
        >>> del os.environ["REFEREE_LIBRARIES"]
    """
    home = libraries_home()
    wanted = [f"{name}@{version}" for name, version in NPM_PACKAGES.items()
              if not (home / "node_modules" / name / "package.json").is_file()]
    if not wanted:
        return f"npm packages: {', '.join(NPM_PACKAGES)} already in {home / 'node_modules'}"
    npm = shutil.which("npm")
    if npm is None:
        return "npm packages: npm is not installed"
    home.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run([npm, "install", "--prefix", str(home), "--no-save", "--no-audit", "--no-fund", *wanted],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=_SECONDS)
    except subprocess.TimeoutExpired:
        return f"npm packages: npm ran past {_SECONDS} s (no registry reachable?)"
    if done.returncode != 0:
        return f"npm packages: npm failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
    return f"npm packages: installed {', '.join(wanted)} into {home / 'node_modules'}"


def main(registry: str = DEBIAN_CRATES) -> int:
    """Give the judge the libraries this machine can: build the Rust crates from ``registry``, install
    the npm packages. Prints one line per kind; returns 0 even when one cannot be had (the judge then
    says so for each problem that needs it).

    Example:
        >>> home = tempfile.mkdtemp()
        >>> os.makedirs(f"{home}/node_modules/js-md5"); Path(f"{home}/node_modules/js-md5/package.json").write_text("{}")
        2
        >>> os.environ["REFEREE_LIBRARIES"] = home
        >>> main(registry="/no/such/registry")  # doctest: +ELLIPSIS
        Rust crates: ...
        npm packages: js-md5 already in ...
        0
        >>> del os.environ["REFEREE_LIBRARIES"]
    """
    from .languages import find_toolchain

    rust = find_toolchain("rust")
    print(build_rust_crates(rust.tools["rustc"], rust.version, registry) if rust is not None
          else "Rust crates: no rustc here")
    print(install_npm_packages())
    return 0


if __name__ == "__main__":
    sys.exit(main())
