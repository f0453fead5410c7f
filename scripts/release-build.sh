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
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-deb
# Debug information as line tables only (Swift and C): the unstripped binary still names a crash report's addresses
# with their functions, files and lines; full -g made BoringSSL's compile 10 % slower and every link read more.
flags=(
    -c release --static-swift-stdlib --scratch-path "$scratch" -Xswiftc -gline-tables-only -Xcc -gline-tables-only
    -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcc -fdata-sections
    -Xswiftc -use-ld=lld -Xlinker --no-export-dynamic -Xlinker -z -Xlinker pack-relative-relocs
)
swift=${SWIFT:-swift}
if [[ " $* " == *" --show-bin-path "* ]]; then exec "$swift" build "${flags[@]}" "$@"; fi

mkdir -p "$scratch/lean"
order="$PWD/packaging/driverd.order.gz"
if [[ -f "$order" ]]; then
    # Named by its content: SwiftPM relinks when the flags change, not when a file they name does.
    unpacked="$scratch/lean/driverd-$(sha256sum "$order" | cut -c1-12).order"
    [[ -f "$unpacked" ]] || gzip -dc "$order" >"$unpacked"
    flags+=(-Xlinker "--symbol-ordering-file=$PWD/$unpacked" -Xlinker --no-warn-symbol-ordering)
fi
# Private functions have no symbol to order by: packaging/driverd-layout.ld keeps them together.
flags+=(-Xlinker "$PWD/packaging/driverd-layout.ld")
empty="$PWD/$scratch/lean/empty.a"
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
    "$swift" build "${flags[@]}" "$@"
    "$swift" build "${flags[@]}" "${no_foundation[@]}" --product driverd
    exec "$swift" build "${flags[@]}" "${no_foundation[@]}" --product driverd-kiosk
elif [[ "${products[*]}" == driverd || "${products[*]}" == driverd-kiosk ]]; then
    exec "$swift" build "${flags[@]}" "${no_foundation[@]}" "$@"
else
    exec "$swift" build "${flags[@]}" "$@"
fi
