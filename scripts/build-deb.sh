#!/usr/bin/env bash
# make deb: builds out/driverd_<version>_<arch>.deb and out/driverd-kiosk_<version>_<arch>.deb (the driver's
# screen and voice, a package of its own that depends on driverd) from a release build with the Swift runtime linked in
# statically (so the package depends only on Debian's libraries), then checks it with lintian.
#
#   DRIVERD_DEB_VERSION  package version (default: DaemonVersion.current); the install test builds an older one
#   DRIVERD_DEB_OUT      output directory (default: out)
#
# With --build-only it stops after the build; with --package-only it packages what that build left.
# With DRIVERD_DEBUG_BUILD set (`make deb-debug`, CI's package) it packages the debug build's objects, linked as the
# release build links them (scripts/release-build.sh); the size figures are then the release build's business.
set -euo pipefail
cd "$(dirname "$0")/.."

version_in_source=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/DriverDaemon/DaemonVersion.swift)
VERSION=${DRIVERD_DEB_VERSION:-$version_in_source}
ARCH=$(dpkg --print-architecture)
OUT=${DRIVERD_DEB_OUT:-out}
SCRATCH=.build-deb
SWIFT=${SWIFT:-swift}
release() { scripts/release-build.sh "$@"; }
# xz for what ships; CI's package of the debug build (an 87 MB binary, installed once beside the tests) is quicker
# packed than it is small.
compression=(-Zxz)
[ -n "${DRIVERD_DEBUG_BUILD:-}" ] && compression=(-Zgzip -z1)

if [[ "${1:-}" != --package-only ]]; then
    echo "== ${DRIVERD_DEBUG_BUILD:+the objects of the debug build, linked as the }release build (static Swift runtime)"
    # One binary for both programs: driverctl is a link to driverd, which runs as driverctl when called by that
    # name (one copy of the static Swift runtime and of the libraries both use, instead of two).
    release --product driverd
    release --product driverd-kiosk
    # swift-argument-parser's man page writer, built as a product of its own: its GenerateManual plugin would
    # rebuild the whole package, and names the tool differently across SwiftPM versions.
    release --product generate-manual
fi
BIN=$(release --show-bin-path)
[[ "${1:-}" == "--build-only" ]] && exit 0

ROOT="$SCRATCH/pkg/driverd"
rm -rf "$ROOT"
install -d "$ROOT/DEBIAN" "$ROOT/usr/bin" "$ROOT/lib/systemd/system" "$ROOT/usr/lib/sysusers.d" \
    "$ROOT/usr/lib/tmpfiles.d" "$ROOT/usr/lib/systemd/catalog" "$ROOT/etc/driverd" "$ROOT/etc/chrony/conf.d" \
    "$ROOT/usr/share/doc/driverd" "$ROOT/usr/share/man/man1" "$ROOT/usr/share/man/man8" \
    "$ROOT/usr/share/bash-completion/completions" "$ROOT/usr/share/zsh/vendor-completions" \
    "$ROOT/usr/share/fish/vendor_completions.d"

# The version the binary reports is the one in the source; a test build for the upgrade test may differ.
# ICU (30+ MB) must stay out of the daemon: fail here, on the unstripped binary, when something links it again.
scripts/check-no-icu.sh "$BIN/driverd"
install -m 0755 "$BIN/driverd" "$ROOT/usr/bin/driverd"
# As dh_strip does.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$ROOT/usr/bin/driverd"
ln -s driverd "$ROOT/usr/bin/driverctl"
# And driverd-update, the root side of self-update (driverd-update.service runs it).
install -d "$ROOT/usr/libexec"
ln -s ../bin/driverd "$ROOT/usr/libexec/driverd-update"

install -m 0644 systemd/driverd.service systemd/driverd.socket systemd/driverd-update.service systemd/driverd-update.path \
    "$ROOT/lib/systemd/system/"
install -m 0644 systemd/driverd.sysusers "$ROOT/usr/lib/sysusers.d/driverd.conf"
install -m 0644 systemd/driverd.tmpfiles "$ROOT/usr/lib/tmpfiles.d/driverd.conf"
install -m 0644 packaging/driverd.catalog "$ROOT/usr/lib/systemd/catalog/driverd.catalog"
install -m 0644 packaging/driverd.toml "$ROOT/etc/driverd/driverd.toml"
# chrony (recommended) sets the system clock from gpsd's shared memory with this drop-in.
install -m 0644 packaging/chrony/driverd-gpsd.conf "$ROOT/etc/chrony/conf.d/driverd-gpsd.conf"
install -m 0644 packaging/debian/copyright "$ROOT/usr/share/doc/driverd/copyright"
install -d "$ROOT/usr/share/lintian/overrides"
install -m 0644 packaging/debian/lintian-overrides "$ROOT/usr/share/lintian/overrides/driverd"

# Man pages and completions come from swift-argument-parser, from the binaries themselves.
echo "== man pages and shell completions"
generate_manual="$BIN/generate-manual"
manual_date=$(date -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)" +%Y-%m-%d)
"$generate_manual" "$ROOT/usr/bin/driverd" --section 8 --date "$manual_date" -o "$ROOT/usr/share/man/man8"
"$generate_manual" "$ROOT/usr/bin/driverctl" --section 1 --date "$manual_date" -o "$ROOT/usr/share/man/man1"
gzip -9n "$ROOT/usr/share/man/man8/driverd.8" "$ROOT/usr/share/man/man1/driverctl.1"
for program in driverd driverctl; do
    # Completion files are sourced, not run: no #! line.
    "$ROOT/usr/bin/$program" --generate-completion-script bash | sed '1{/^#!/d}' >"$ROOT/usr/share/bash-completion/completions/$program"
    "$ROOT/usr/bin/$program" --generate-completion-script zsh >"$ROOT/usr/share/zsh/vendor-completions/_$program"
    "$ROOT/usr/bin/$program" --generate-completion-script fish >"$ROOT/usr/share/fish/vendor_completions.d/$program.fish"
done

# A native package: the changelog is the project's, in Debian's format.
date_rfc2822=$(date -R -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")
cat >"$ROOT/usr/share/doc/driverd/changelog" <<CHANGELOG
driverd ($VERSION) bookworm; urgency=medium

  * Built from $(git rev-parse --short HEAD 2>/dev/null || echo "a source tree without git").
    See README.md for what this release does.

 -- driverd developers <driverd@fleet.invalid>  $date_rfc2822
CHANGELOG
gzip -9n "$ROOT/usr/share/doc/driverd/changelog"

install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$ROOT/DEBIAN/"
printf '/etc/driverd/driverd.toml\n/etc/chrony/conf.d/driverd-gpsd.conf\n' >"$ROOT/DEBIAN/conffiles"

# Runtime dependencies as Debian computes them (libgps, libsystemd, libsqlite3, zlib, libc …), plus what the
# maintainer scripts run: systemd-sysusers and systemd-tmpfiles.
shlibs_dir=$(mktemp -d)
trap 'rm -rf "$shlibs_dir"' EXIT
mkdir -p "$shlibs_dir/debian"
printf 'Source: driverd\n\nPackage: driverd\nArchitecture: any\n' >"$shlibs_dir/debian/control"
shlibs=$(cd "$shlibs_dir" && dpkg-shlibdeps -O "-e$OLDPWD/$ROOT/usr/bin/driverd" 2>/dev/null \
    | sed -n 's/^shlibs:Depends=//p')
depends="$shlibs, systemd | systemd-sysusers"
size=$(du -k -s --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    packaging/debian/control.in >"$ROOT/DEBIAN/control"
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | sort -z | xargs -0 md5sum) \
    >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums" "$ROOT/DEBIAN/conffiles" "$ROOT/DEBIAN/control"

mkdir -p "$OUT"
DEB="$OUT/driverd_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group "${compression[@]}" --build "$ROOT" "$DEB" >/dev/null
echo "== built $DEB ($(du -h "$DEB" | cut -f1); $(stat -c %s "$DEB") bytes; installed $size KiB, of which /usr/bin/driverd $(( $(stat -c %s "$ROOT/usr/bin/driverd") / 1024 )) KiB)"
dpkg-deb --info "$DEB" | sed -n 's/^ \(Depends\|Version\|Installed-Size\):/  \1:/p'

# ---- driverd-kiosk: the driver's screen (the page, served on loopback, bridged to driverd) and voice --------
KROOT="$SCRATCH/pkg/driverd-kiosk"
rm -rf "$KROOT"
install -d "$KROOT/DEBIAN" "$KROOT/usr/bin" "$KROOT/lib/systemd/system" "$KROOT/usr/lib/sysusers.d" "$KROOT/etc/driverd" \
    "$KROOT/usr/share/driverd-kiosk/www" "$KROOT/usr/share/doc/driverd-kiosk/examples" "$KROOT/usr/share/man/man8" \
    "$KROOT/usr/share/lintian/overrides"
# The kiosk stays as lean as driverd: no ICU either.
scripts/check-no-icu.sh "$BIN/driverd-kiosk"
install -m 0755 "$BIN/driverd-kiosk" "$KROOT/usr/bin/driverd-kiosk"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$KROOT/usr/bin/driverd-kiosk"
# The page as it is: no build step, nothing fetched at run time.
install -m 0644 kiosk/www/*.* "$KROOT/usr/share/driverd-kiosk/www/"
install -d "$KROOT/usr/share/driverd-kiosk/www/i18n"
install -m 0644 kiosk/www/i18n/*.json "$KROOT/usr/share/driverd-kiosk/www/i18n/"
install -m 0644 systemd/driverd-kiosk.service "$KROOT/lib/systemd/system/"
install -m 0644 systemd/driverd-kiosk.sysusers "$KROOT/usr/lib/sysusers.d/driverd-kiosk.conf"
install -m 0644 packaging/kiosk.toml "$KROOT/etc/driverd/kiosk.toml"
install -m 0644 packaging/driverd-kiosk-browser.service "$KROOT/usr/share/doc/driverd-kiosk/examples/"
install -m 0644 packaging/debian/copyright "$KROOT/usr/share/doc/driverd-kiosk/copyright"
install -m 0644 packaging/debian/kiosk.lintian-overrides "$KROOT/usr/share/lintian/overrides/driverd-kiosk"
"$generate_manual" "$KROOT/usr/bin/driverd-kiosk" --section 8 --date "$manual_date" -o "$KROOT/usr/share/man/man8"
gzip -9n "$KROOT/usr/share/man/man8/driverd-kiosk.8"
sed 's/^driverd (/driverd-kiosk (/' <(gzip -dc "$ROOT/usr/share/doc/driverd/changelog.gz") | gzip -9n >"$KROOT/usr/share/doc/driverd-kiosk/changelog.gz"
install -m 0755 packaging/debian/kiosk.postinst "$KROOT/DEBIAN/postinst"
install -m 0755 packaging/debian/kiosk.prerm "$KROOT/DEBIAN/prerm"
install -m 0755 packaging/debian/kiosk.postrm "$KROOT/DEBIAN/postrm"
printf '/etc/driverd/kiosk.toml\n' >"$KROOT/DEBIAN/conffiles"
kshlibs=$(cd "$shlibs_dir" && dpkg-shlibdeps -O "-e$OLDPWD/$KROOT/usr/bin/driverd-kiosk" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
ksize=$(du -k -s --exclude=DEBIAN "$KROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/g" -e "s/@ARCH@/$ARCH/" -e "s/@SIZE@/$ksize/" -e "s/@DEPENDS@/$kshlibs, driverd (= $VERSION), systemd | systemd-sysusers/" \
    packaging/debian/kiosk.control.in >"$KROOT/DEBIAN/control"
(cd "$KROOT" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$KROOT/DEBIAN/md5sums"
chmod 0644 "$KROOT/DEBIAN/md5sums" "$KROOT/DEBIAN/conffiles" "$KROOT/DEBIAN/control"
KDEB="$OUT/driverd-kiosk_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group "${compression[@]}" --build "$KROOT" "$KDEB" >/dev/null
echo "== built $KDEB ($(du -h "$KDEB" | cut -f1); $(stat -c %s "$KDEB") bytes; installed $ksize KiB, of which /usr/bin/driverd-kiosk $(( $(stat -c %s "$KROOT/usr/bin/driverd-kiosk") / 1024 )) KiB)"

# The size figures of docs/LEAN.md beside their baseline, measured now: the smallest a static Swift program that
# uses FoundationEssentials can be, built by the same toolchain and stripped the same way.
if [ -n "${DRIVERD_DEBUG_BUILD:-}" ]; then
    echo "== figures: none for a package of the debug build (make deb gives them)"
else
    floor_dir=$(mktemp -d)
    printf 'import FoundationEssentials\nprint(Date.now.timeIntervalSince1970 > 0, try JSONEncoder().encode([1]).count)\n' >"$floor_dir/hello.swift"
    if "$SWIFT"c -O -static-stdlib "$floor_dir/hello.swift" -o "$floor_dir/hello" >/dev/null 2>&1; then
        strip --remove-section=.comment --remove-section=.note --strip-unneeded "$floor_dir/hello"
        floor_kib=$(( $(stat -c %s "$floor_dir/hello") / 1024 ))
    else
        floor_kib=unknown
    fi
    rm -rf "$floor_dir"
    deb_mb=$(awk -v b="$(stat -c %s "$DEB")" 'BEGIN { printf "%.1f", b / 1e6 }')
    installed_mb=$(awk -v k="$size" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
    echo "== figures: driverd + driverctl .deb $deb_mb MB (target <= 15), installed $installed_mb MB (target <= 45);" \
        "baseline: a static FoundationEssentials hello world strips to $floor_kib KiB, driverd to $(( $(stat -c %s "$ROOT/usr/bin/driverd") / 1024 )) KiB"
fi

if [ "${DRIVERD_DEB_LINT:-1}" = 1 ]; then
    echo "== lintian"
    # Errors fail the build; warnings are printed for the reader.
    lintian --fail-on error --info "$DEB" "$KDEB"
    echo "lintian: no errors"
fi
