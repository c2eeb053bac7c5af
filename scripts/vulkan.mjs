// Which Vulkan driver Dawn (the `webgpu` npm package) gets in Node: the machine's own where it has
// a hardware one, SwiftShader (from Debian's chromium package) only where it has none. Pointing
// VK_ICD_FILENAMES at SwiftShader hides every other driver, so setting it whenever SwiftShader is
// installed would make a machine with a GPU train and bench on the software one.
import { existsSync, readdirSync } from 'node:fs';
import { SWIFTSHADER_ICD } from './chromium.mjs';

/**
 * Folders the Vulkan loader reads driver manifests from on Linux: $XDG_CONFIG_DIRS and
 * $XDG_DATA_DIRS (with their defaults), then /etc and /usr/local/etc.
 * @param {NodeJS.ProcessEnv} env
 * @returns {string[]}
 */
export function icdFolders(env) {
  const config = (env.XDG_CONFIG_DIRS || '/etc/xdg').split(':');
  const data = (env.XDG_DATA_DIRS || '/usr/local/share:/usr/share').split(':');
  const folders = [...config, '/usr/local/etc', '/etc', ...data].filter(Boolean);
  return [...new Set(folders.map((f) => `${f.replace(/\/$/, '')}/vulkan/icd.d`))];
}

/**
 * Software drivers, which do not count as a GPU: SwiftShader itself, and Mesa's lavapipe (Debian
 * 12's, Mesa 22, gives Dawn no adapter at all).
 */
const SOFTWARE_DRIVER = /swiftshader|lvp|lavapipe/i;

/**
 * @typedef {{ icd?: string, message: string }} VulkanChoice
 * `icd`: the value VK_ICD_FILENAMES must take (none: leave the loader to find the system's drivers).
 */

/**
 * Decides the driver without changing anything.
 * @param {{ env?: NodeJS.ProcessEnv, platform?: string, swiftshader?: string,
 *           exists?: (path: string) => boolean, list?: (folder: string) => string[] }} [options]
 * @returns {VulkanChoice}
 */
export function chooseVulkanDriver(options = {}) {
  const env = options.env ?? process.env;
  const exists = options.exists ?? existsSync;
  const list = options.list ?? ((/** @type {string} */ folder) => readdirSync(folder));
  const swiftshader = options.swiftshader ?? SWIFTSHADER_ICD;
  if ((options.platform ?? process.platform) !== 'linux') {
    return { message: 'vulkan: the system driver (not Linux)' };
  }
  const given = env.VK_ICD_FILENAMES || env.VK_DRIVER_FILES;
  if (given) return { message: `vulkan: the driver set in the environment (${given})` };
  const hardware = [];
  for (const folder of icdFolders(env)) {
    if (!exists(folder)) continue;
    for (const name of list(folder)) {
      if (name.endsWith('.json') && !SOFTWARE_DRIVER.test(name)) hardware.push(`${folder}/${name}`);
    }
  }
  if (hardware.length > 0) {
    return { message: `vulkan: the machine's driver (${hardware.join(', ')}), not SwiftShader` };
  }
  if (exists(swiftshader)) {
    return {
      icd: swiftshader,
      message: `vulkan: SwiftShader, a software driver (${swiftshader}): no hardware driver found`,
    };
  }
  return { message: 'vulkan: no driver found (no hardware driver, no SwiftShader)' };
}

/**
 * Applies the choice to this process (its children inherit it) and returns the line that says
 * which it was.
 * @returns {string}
 */
export function useVulkanDriver() {
  const choice = chooseVulkanDriver();
  if (choice.icd) process.env.VK_ICD_FILENAMES = choice.icd;
  return choice.message;
}
