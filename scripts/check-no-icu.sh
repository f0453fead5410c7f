#!/usr/bin/env bash
# Fails when a statically linked binary carries ICU or the parts of Foundation that need it: ICU's data alone is
# about 30 MB, and Foundation's `Foundation` and `FoundationInternationalization` modules link it in as soon as
# one of their symbols is used (String(format:), DateFormatter, NSRegularExpression, FileHandle, Process,
# trimmingCharacters(in:), a `contains` resolved to Foundation's StringProtocol extension…). docs/LEAN.md says
# how to find the culprit. Needs the unstripped binary (symbols).
#
#   scripts/check-no-icu.sh BINARY...
set -euo pipefail
status=0
for binary in "$@"; do
    symbols=$(nm --defined-only "$binary" 2>/dev/null) || { echo "check-no-icu: cannot read the symbols of $binary" >&2; exit 2; }
    [ -n "$symbols" ] || { echo "check-no-icu: $binary has no symbols (stripped?): check the unstripped build" >&2; exit 2; }
    # ICU's data and code (lib_FoundationICU), swift-corelibs-foundation (module Foundation, mangled $s10Foundation)
    # and FoundationInternationalization ($s30FoundationInternationalization).
    found=$(grep -E ' (icudt[0-9]+_dat|ucal_open|_?\$s10Foundation[0-9A-Za-z_]+|_?\$s30FoundationInternationalization[0-9A-Za-z_]+)$' <<<"$symbols" | awk '{print $3}' || true)
    if [ -n "$found" ]; then
        echo "check-no-icu: FAIL: $binary links ICU or Foundation's ICU-backed modules ($(wc -l <<<"$found") symbols), e.g.:" >&2
        head -5 <<<"$found" | sed 's/^/    /' >&2
        echo "  Find who pulls them in: docs/LEAN.md, 'Keeping ICU out'." >&2
        status=1
    else
        echo "check-no-icu: ok: $binary has no ICU and no Foundation/FoundationInternationalization symbols"
    fi
done
exit $status
