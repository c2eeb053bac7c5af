/** scripts/vulkan.mjs: SwiftShader only where no hardware Vulkan driver exists, and which is said. */
import { describe, expect, it } from 'vitest';
import { chooseVulkanDriver, icdFolders } from '../../scripts/vulkan.mjs';

const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** A machine whose driver folders hold `files` (folder → manifest names). */
function machine(files: Record<string, string[]>, env: NodeJS.ProcessEnv = {}) {
  const exists = (path: string) => path === SWIFTSHADER || path in files;
  return chooseVulkanDriver({
    env,
    platform: 'linux',
    swiftshader: SWIFTSHADER,
    exists,
    list: (folder) => files[folder] ?? [],
  });
}

describe('chooseVulkanDriver', () => {
  it('keeps a GPU visible: a hardware manifest means no SwiftShader', () => {
    const choice = machine({ '/usr/share/vulkan/icd.d': ['nvidia_icd.json'] });
    expect(choice.icd).toBeUndefined();
    expect(choice.message).toBe(
      "vulkan: the machine's driver (/usr/share/vulkan/icd.d/nvidia_icd.json), not SwiftShader",
    );
    expect(machine({ '/etc/vulkan/icd.d': ['radeon_icd.x86_64.json'] }).icd).toBeUndefined();
  });

  it('falls back to SwiftShader where only software drivers exist (lavapipe, or none)', () => {
    const machines: Record<string, string[]>[] = [
      {},
      { '/usr/share/vulkan/icd.d': ['lvp_icd.x86_64.json'] },
    ];
    for (const files of machines) {
      const choice = machine(files);
      expect(choice.icd).toBe(SWIFTSHADER);
      expect(choice.message).toContain('SwiftShader, a software driver');
    }
  });

  it('leaves a driver the environment names alone, and says so', () => {
    const choice = machine({}, { VK_ICD_FILENAMES: '/x/icd.json' });
    expect(choice).toEqual({ message: 'vulkan: the driver set in the environment (/x/icd.json)' });
  });

  it('reads the loader folders, XDG ones included', () => {
    expect(icdFolders({})).toEqual([
      '/etc/xdg/vulkan/icd.d',
      '/usr/local/etc/vulkan/icd.d',
      '/etc/vulkan/icd.d',
      '/usr/local/share/vulkan/icd.d',
      '/usr/share/vulkan/icd.d',
    ]);
    expect(icdFolders({ XDG_DATA_DIRS: '/opt/share/' })).toContain('/opt/share/vulkan/icd.d');
  });

  it("reads this machine's own folders without failing", () => {
    expect(chooseVulkanDriver().message).toMatch(/^vulkan: /);
  });
});
