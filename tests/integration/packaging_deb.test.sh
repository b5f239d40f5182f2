#!/usr/bin/env bash
# The Debian package (scripts/package): its contents, its declared dependencies, lintian, the man
# pages, the systemd unit (systemd-analyze verify and security, offline), and the default
# configuration file: every `skewscope agent` flag is in it and every key in it is accepted.
source "$(dirname "$0")/lib.sh"

DEB=$("$SOURCE/scripts/package" "$BUILD" "$WORK") || fail "scripts/package failed"
note "package $(basename "$DEB"): $(stat -c %s "$DEB") bytes, installed size $(dpkg-deb -f "$DEB" Installed-Size) KiB"

# Contents.
dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$WORK/contents"
for path in /usr/bin/skewscope /lib/systemd/system/skewscope.service /etc/skewscope/agent.conf \
  /usr/share/doc/skewscope/copyright /usr/share/doc/skewscope/changelog.gz \
  /usr/share/doc/skewscope/install.md /usr/share/doc/skewscope/contract.md \
  /usr/share/doc/skewscope/prometheus/prometheus.yml /usr/share/doc/skewscope/prometheus/skewscope.rules.yml \
  /usr/share/man/man1/skewscope.1.gz /usr/share/man/man1/skewscope-agent.1.gz; do
  grep -qxF "$path" "$WORK/contents" || fail "$path missing from the package"
done
# Nothing else the build makes (tests, benchmarks, tools) slipped in.
bins=$(grep -c '^/usr/bin/.' "$WORK/contents")
[ "$bins" -eq 1 ] || fail "expected only /usr/bin/skewscope, found $bins files in /usr/bin"
dpkg-deb -e "$DEB" "$WORK/control"
grep -qxF /etc/skewscope/agent.conf "$WORK/control/conffiles" || fail "agent.conf is not a conffile"
depends=$(dpkg-deb -f "$DEB" Depends)
note "Depends: $depends"
for lib in libbpf1 librdkafka1 libmicrohttpd12 libc6 init-system-helpers; do
  grep -q "\b$lib\b" <<<"$depends" || fail "Depends lacks $lib"
done

# Lintian: no error, no warning; informational tags are printed, overrides are in packaging/deb.
lintian --fail-on error,warning --info --display-info "$DEB" >"$WORK/lintian.out" 2>&1 || {
  cat "$WORK/lintian.out"; fail "lintian found errors or warnings"; }
note "lintian: no error or warning; informational: $(grep '^I:' "$WORK/lintian.out" | tr '\n' ' ')"

# Man pages: one per subcommand, each rendering its own options.
dpkg-deb -x "$DEB" "$WORK/root"
for sub in agent status top simulate doctor clocks whatif; do
  page=$WORK/root/usr/share/man/man1/skewscope-$sub.1.gz
  [ -f "$page" ] || fail "no man page for $sub"
  MANWIDTH=100 man -l "$page" 2>/dev/null | grep -q "skewscope $sub\|$sub" || fail "man page of $sub does not render"
done
MANWIDTH=200 man -l "$WORK/root/usr/share/man/man1/skewscope-agent.1.gz" 2>/dev/null >"$WORK/agent.man"
for opt in --config --listen --domain --exchange-config --web.config.file; do
  grep -qe "$opt" "$WORK/agent.man" || fail "man skewscope-agent lacks $opt"
done

# The unit as packaged, with only its binary's path pointed at the package's own binary (the
# package is not installed here), and its man pages found in the package.
unit=$WORK/root/lib/systemd/system/skewscope.service
mkdir -p "$WORK/units"
sed "s|^ExecStart=/usr/bin/skewscope |ExecStart=$WORK/root/usr/bin/skewscope |" "$unit" >"$WORK/units/skewscope.service"
MANPATH=$WORK/root/usr/share/man systemd-analyze verify "$WORK/units/skewscope.service" >"$WORK/verify.out" 2>&1 || {
  cat "$WORK/verify.out"; fail "systemd-analyze verify"; }
[ ! -s "$WORK/verify.out" ] || { cat "$WORK/verify.out"; fail "systemd-analyze verify printed warnings"; }
systemd-analyze security --offline=yes "$WORK/units/skewscope.service" >"$WORK/security.out" 2>&1 ||
  { cat "$WORK/security.out"; fail "systemd-analyze security"; }
note "$(grep -i 'overall exposure' "$WORK/security.out")"
grep -q '^ProtectClock=' "$unit" && fail "the unit must not use ProtectClock= (it denies reading PHCs)"
grep -qx 'Restart=on-failure' "$unit" || fail "Restart=on-failure missing"
grep -qx 'DeviceAllow=char-ptp r' "$unit" || fail "PTP clocks not allowed"

# The default configuration: documents every agent flag, and each key is one the agent accepts.
"$SKEWSCOPE" agent --help | grep -o -- '--[a-z][a-z0-9.-]*' | sort -u | grep -vxF -e --help -e --config >"$WORK/flags"
conf=$WORK/root/etc/skewscope/agent.conf
while read -r flag; do
  grep -q "^# ${flag#--} = " "$conf" || fail "$flag is not documented in agent.conf"
done <"$WORK/flags"
sed -n 's/^# \([a-z][a-z0-9.-]* = .*\)/\1/p' "$conf" >"$WORK/all.conf"
[ "$(wc -l <"$WORK/all.conf")" -eq "$(wc -l <"$WORK/flags")" ] || fail "agent.conf has keys that are not flags"
# Every key set at once: the parse must get past all of them and stop at the command line's
# deliberate bad --window (validated after parsing), proving each key was taken.
set +e
out=$("$SKEWSCOPE" agent --config "$WORK/all.conf" --window 0s 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--window must be" <<<"$out" || fail "all keys of agent.conf: exit $rc, $out"
printf 'listen = "127.0.0.1:1"\nno-such-flag = 1\n' >"$WORK/bad.conf"
set +e
out=$("$SKEWSCOPE" agent --config "$WORK/bad.conf" 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q "no-such-flag: no such option" <<<"$out" || fail "bad config: exit $rc, $out"
echo "packaging_deb: 1 passed, 0 failed"
