#!/usr/bin/env bash
# The static release build the package ships and `make bench` measures (one scratch folder serves both):
#
#   scripts/release-build.sh [swift build options...]    e.g. --product driverd, --show-bin-path
#
# With no --product it builds every product, then links driverd again on its own (below).
#
# The link is set for a unit's memory (docs/LEAN.md, "Memory"); each flag was measured on driverd's peak RSS:
# - lld, with relative relocations packed (DT_RELR, glibc >= 2.36): the loader read 2.2 MB of RELA entries at
#   every start;
# - no --export-dynamic (the static runtime's link arguments turn it on): 41,000 exported symbols whose tables
#   (2.4 MB) every symbol lookup of the shared libraries walked. Crash reports of the stripped binary show
#   addresses then; the unstripped build (same build id) names them;
# - one section per function (Swift and C), laid out in the order of packaging/driverd.order.gz (made by
#   scripts/make-order-file.sh) and packaging/driverd-layout.ld: what runs at start and while tracking sits
#   together, since the kernel maps 64 KiB around every page a process touches (fault-around) and scattered code
#   cost 10.8 MB of RSS;
# - driverd and driverd-kiosk: Foundation's ICU-backed archives are replaced by an empty one. lld takes a weak symbol from
#   the first archive on the line that defines it, and the autolinked libFoundation.a comes before
#   libFoundationEssentials.a, so one specialisation pulled in all of Foundation and ICU (gold scanned in
#   order and never did). Now anything that needs Foundation fails driverd's link, not just check-no-icu.
#
# DRIVERD_DEBUG_BUILD="swift build <flags>" (make's debug build command) links that build's objects instead, with the
# same runtime and Foundation rules; no compile flag changes, so nothing recompiles. CI packages this (.ci/run):
# the package's install test checks what the package does, not how fast its code is, and the release build's
# compile is 15 of CI's 39 CPU-minutes. The layout (order file, one section per function) is the release build's alone.
set -euo pipefail
cd "$(dirname "$0")/.."
lean=.build-deb/lean
swift=${SWIFT:-swift}
# (make's debug build links with lld already; a compile flag added here would recompile it all.)
link=(--static-swift-stdlib -Xlinker --no-export-dynamic -Xlinker -z -Xlinker pack-relative-relocs)
if [[ -n "${DRIVERD_DEBUG_BUILD:-}" ]]; then
    read -ra build <<<"$DRIVERD_DEBUG_BUILD"
    # Unspecialised debug code of FoundationEssentials reaches into these two, and a static archive's autolink
    # entries are never read.
    flags=("${link[@]}" -Xlinker -l_FoundationCollections -Xlinker -l_FoundationCShims)
else
    build=("$swift" build)
    # Debug information as line tables only (Swift and C): the unstripped binary still names a crash report's
    # addresses with their functions, files and lines; full -g made BoringSSL's compile 10 % slower and every link
    # read more.
    flags=(
        -c release --scratch-path .build-deb -Xswiftc -gline-tables-only -Xcc -gline-tables-only
        -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcc -fdata-sections -Xswiftc -use-ld=lld "${link[@]}"
    )
fi
if [[ " $* " == *" --show-bin-path "* ]]; then exec "${build[@]}" "${flags[@]}" "$@"; fi

mkdir -p "$lean"
order="$PWD/packaging/driverd.order.gz"
if [[ -z "${DRIVERD_DEBUG_BUILD:-}" && -f "$order" ]]; then
    # Named by its content: SwiftPM relinks when the flags change, not when a file they name does.
    unpacked="$lean/driverd-$(sha256sum "$order" | cut -c1-12).order"
    [[ -f "$unpacked" ]] || gzip -dc "$order" >"$unpacked"
    flags+=(-Xlinker "--symbol-ordering-file=$PWD/$unpacked" -Xlinker --no-warn-symbol-ordering)
    # Private functions have no symbol to order by: packaging/driverd-layout.ld keeps them together.
    flags+=(-Xlinker "$PWD/packaging/driverd-layout.ld")
fi
empty="$PWD/$lean/empty.a"
[[ -f "$empty" ]] || ar rcs "$empty"
no_foundation=()
for archive in libFoundation.a libCoreFoundation.a lib_FoundationICU.a libFoundationInternationalization.a; do
    no_foundation+=(-Xlinker "--remap-inputs=*/$archive=$empty")
done

products=()
for ((i = 1; i <= $#; i++)); do [[ "${!i}" == --product ]] && { j=$((i + 1)); products+=("${!j}"); }; done
if [[ ${#products[@]} -eq 0 ]]; then
    # Everything (the benchmarks and dispatch-sim use Foundation), then driverd and driverd-kiosk relinked without
    # it (a link only: the flags of the compile steps are the same).
    "${build[@]}" "${flags[@]}" "$@"
    "${build[@]}" "${flags[@]}" "${no_foundation[@]}" --product driverd
    exec "${build[@]}" "${flags[@]}" "${no_foundation[@]}" --product driverd-kiosk
elif [[ -n "${DRIVERD_DEBUG_BUILD:-}" && "${products[*]}" == generate-manual ]]; then
    # A tool that runs here only, linked as the debug build links everything (a static debug link of Foundation
    # misses archives the release link finds).
    exec "${build[@]}" "$@"
elif [[ "${products[*]}" == driverd || "${products[*]}" == driverd-kiosk ]]; then
    exec "${build[@]}" "${flags[@]}" "${no_foundation[@]}" "$@"
else
    exec "${build[@]}" "${flags[@]}" "$@"
fi
