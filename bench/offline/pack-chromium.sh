#!/bin/bash
# Packs this machine's Debian Chromium for a GPU machine that has none (and no registry): the
# browser directory, every shared library it links against except glibc's own, the NSS modules it
# loads at run time, and a font, under one prefix. Writes .offline-chromium/chromium.part-aa, -ab, …
# (xz, split in 48 MB pieces: a device call may carry 64 MiB with the working tree). On the GPU
# machine, run-chromium.sh joins and unpacks them. Run from the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
browser=/usr/lib/chromium
[ -x "$browser/chromium" ] || { echo "no $browser/chromium (npm run setup:chromium)"; exit 1; }
staging=$(mktemp -d)
pack="$staging/chromium-pack"
mkdir -p "$pack/lib" "$pack/fonts"
# Khronos' validation layer and the mock driver are test tools (23 MB); SwiftShader stays out too:
# this pack is for a machine with a GPU driver.
tar -C "$browser" -cf - --exclude=libVkLayer_khronos_validation.so \
  --exclude='libVkICD_mock_icd.*' --exclude='libvk_swiftshader.so' \
  --exclude=vk_swiftshader_icd.json . | tar -C "$pack" -xf -
for binary in "$browser/chromium" "$browser/chrome_crashpad_handler"; do
  ldd "$binary" | awk '$3 ~ /^\// { print $3 }'
done | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv)\.so|/ld-linux' |
  while read -r lib; do cp -L "$lib" "$pack/lib/"; done
# NSS opens its crypto modules by name next to libnss3.
for module in libsoftokn3.so libfreebl3.so libfreeblpriv3.so libnssckbi.so libnssdbm3.so; do
  [ -e "/usr/lib/x86_64-linux-gnu/$module" ] && cp -L "/usr/lib/x86_64-linux-gnu/$module" "$pack/lib/"
done
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf "$pack/fonts/"
cat > "$pack/fonts.conf" <<'CONF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir prefix="relative">fonts</dir><cachedir>/tmp/fontconfig-cache</cachedir></fontconfig>
CONF
# Playwright starts this instead of the binary: the libraries come from the pack, not the system.
cat > "$pack/chromium-packed" <<'WRAP'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FONTCONFIG_FILE="$here/fonts.conf"
exec "$here/chromium" "$@"
WRAP
chmod +x "$pack/chromium-packed"
du -sh "$pack"
rm -rf .offline-chromium && mkdir -p .offline-chromium
tar -C "$staging" -cf - chromium-pack | xz -T0 -9 | split -b 48M - .offline-chromium/chromium.part-
rm -rf "$staging"
ls -la .offline-chromium
