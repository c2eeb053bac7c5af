// Finds a Chrome/Chromium binary for the browser test layers, and on Debian as root installs
// Debian's `chromium` package when none is found. Debian's package also ships SwiftShader's
// Vulkan driver, which gives Dawn (the `webgpu` npm package) a software adapter in Node.
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** Where Debian's chromium package puts SwiftShader's Vulkan ICD manifest. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** Usual install locations, tried in order after $CHROMIUM_PATH. */
export const CHROMIUM_CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
  '/snap/bin/chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/**
 * Flags for every Chromium the tests launch. WebGPU is behind a flag on Linux; the network flags
 * stop Chromium from calling home on a machine without internet access.
 */
const BASE_CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * The base flags with `extra` added; an extra flag replaces a base flag of the same switch (e.g.
 * a longer --enable-features list), since Chromium keeps only one value per switch.
 * @param {string[]} extra
 */
export function chromiumArgs(extra) {
  const name = (/** @type {string} */ flag) => flag.split('=')[0];
  return [...BASE_CHROMIUM_ARGS.filter((f) => !extra.some((e) => name(e) === name(f))), ...extra];
}

/**
 * The flags the tests and benches launch Chromium with: the base flags plus $CHROMIUM_EXTRA_ARGS
 * (space-separated), e.g. for a hardware GPU in headless mode (bench/offline/run-chromium.sh).
 */
export const CHROMIUM_ARGS = chromiumArgs(
  (process.env.CHROMIUM_EXTRA_ARGS ?? '').split(' ').filter(Boolean),
);

/** @returns {string | undefined} the first Chromium found: $CHROMIUM_PATH, then the usual places. */
export function findChromium() {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) {
      throw new Error(`CHROMIUM_PATH is set to "${fromEnv}", but no file exists there.`);
    }
    return fromEnv;
  }
  return CHROMIUM_CANDIDATES.find((path) => existsSync(path));
}

function isDebianRoot() {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/etc/os-release')) return false;
  const osRelease = readFileSync('/etc/os-release', 'utf8');
  return /^(ID|ID_LIKE)=.*\bdebian\b/m.test(osRelease);
}

/** Dawn loads the Vulkan loader (libvulkan.so.1) at run time; Debian's chromium only recommends it. */
export function hasVulkanLoader() {
  try {
    return execFileSync('/sbin/ldconfig', ['-p'], { encoding: 'utf8' }).includes('libvulkan.so.1');
  } catch {
    return false;
  }
}

function aptInstallChromium() {
  console.log(
    "[chromium] Installing Debian's chromium and libvulkan1 (apt-get, once per machine)...",
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync(
    'apt-get',
    ['install', '-y', '-qq', '--no-install-recommends', 'chromium', 'libvulkan1'],
    {
      stdio: 'inherit',
      env,
    },
  );
}

/**
 * Makes sure a Chromium and (on Linux) SwiftShader's Vulkan driver exist. Installs Debian's package
 * when running as root on Debian; elsewhere stops with what to install.
 * @returns {string} the Chromium executable path
 */
export function ensureChromium() {
  let path = findChromium();
  const needsSwiftShader = process.platform === 'linux' && !process.env.VK_ICD_FILENAMES;
  const missingDriver = needsSwiftShader && (!existsSync(SWIFTSHADER_ICD) || !hasVulkanLoader());
  if ((!path || missingDriver) && isDebianRoot()) {
    aptInstallChromium();
    path = findChromium();
  }
  if (!path) {
    throw new Error(
      [
        'No Chrome or Chromium found for the browser tests.',
        `Looked at $CHROMIUM_PATH and: ${CHROMIUM_CANDIDATES.join(', ')}.`,
        'Install one and run again, e.g. on Debian/Ubuntu: sudo apt-get install chromium',
        'or point CHROMIUM_PATH at an existing Chrome/Chromium binary.',
      ].join('\n'),
    );
  }
  return path;
}

// Run as a script: `node scripts/chromium.mjs` ensures the browser and prints where it is.
if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const path = ensureChromium();
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    const driver = existsSync(SWIFTSHADER_ICD) ? SWIFTSHADER_ICD : 'none found';
    const loader = hasVulkanLoader() ? 'found' : 'MISSING (install libvulkan1)';
    console.log(`[chromium] ${version} at ${path}`);
    console.log(`[chromium] SwiftShader Vulkan driver: ${driver}; Vulkan loader: ${loader}`);
  } catch (error) {
    console.error(`[chromium] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
