# Sourced by the GPU machine's scripts (run.sh, and by hand before a single experiment): unpacks
# .offline/ (see pack.sh) once, puts its Node first on PATH and checks that Dawn finds a hardware
# adapter. Returns non-zero when it does not.
for f in .offline/debs/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
ldconfig 2> /dev/null
if [ ! -x .offline/bin/node ]; then
  tar -xJf .offline/pack.tar.xz
  mkdir -p .offline/bin && mv node .offline/bin/node
fi
export PATH="$PWD/.offline/bin:$PATH"
echo "node $(node --version)"
timeout 40 node bench/offline/probe.mjs || {
  echo "Dawn found no hardware adapter; nothing to measure"
  false
}
