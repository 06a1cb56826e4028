#!/usr/bin/env node
// The release workflow's version decision, kept here so that a test can hold it to its rules.
//   git tag --list 'v*' | node scripts/release-version.js v1.4.0
// prints, in GITHUB_OUTPUT format:
//   version=1.4.0          the tag without its v: the image tag, the chart version and appVersion
//   prerelease=false       true for v1.4.0-rc.1 and the like
//   latest=true            only for the highest version without a prerelease part among all v* tags
//                          (a patch to an older line, v1.3.9 after v1.4.0, is not `latest`)
// It fails (exit 1) on a tag that is not v<major>.<minor>.<patch>[-<prerelease>], or whose version is
// not package.json's (the image, the chart and the service must report one version).
'use strict';
const { readFileSync } = require('fs');
const { join } = require('path');

const TAG = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

function parse(tag) {
  const m = TAG.exec(tag);
  return m ? { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ?? null } : null;
}

function compareCore(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** Decides for `tag` given every v* tag of the repository (the tag itself included or not). */
function decide(tag, allTags, packageVersion) {
  const current = parse(tag);
  if (!current) throw new Error(`tag ${tag} is not v<major>.<minor>.<patch>[-<prerelease>]`);
  const version = tag.slice(1);
  if (packageVersion !== undefined && packageVersion !== version) {
    throw new Error(`tag ${tag} does not match package.json's version ${packageVersion}: bump it first`);
  }
  let latest = current.pre === null;
  for (const other of allTags) {
    const o = parse(other.trim());
    if (o && o.pre === null && compareCore(o.core, current.core) > 0) latest = false;
  }
  return { version, prerelease: current.pre !== null, latest };
}

if (require.main === module) {
  try {
    const tag = process.argv[2];
    if (!tag) throw new Error('usage: git tag --list "v*" | node scripts/release-version.js <tag>');
    const tags = process.stdin.isTTY ? [] : readFileSync(0, 'utf8').split('\n').filter(Boolean);
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    const d = decide(tag, tags, pkg.version);
    process.stdout.write(`version=${d.version}\nprerelease=${d.prerelease}\nlatest=${d.latest}\n`);
  } catch (e) {
    process.stderr.write(`release-version: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}

module.exports = { decide };
