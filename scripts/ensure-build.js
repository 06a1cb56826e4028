// `npm start` on a fresh clone: build once if dist/ is missing or older than src/ (or the demo app
// older than demo/).
const { existsSync, statSync, readdirSync } = require('fs');
const { join } = require('path');
const { execSync } = require('child_process');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const root = join(__dirname, '..');
const main = join(root, 'dist', 'main.js');
const demo = join(root, 'dist', 'public', 'demo', 'index.html');
const stale = (built, source) => !existsSync(built) || statSync(built).mtimeMs < newest(join(root, source));
if (stale(main, 'src') || stale(demo, 'demo')) {
  process.stderr.write('building dist/ ...\n');
  execSync('npm run build --silent', { cwd: root, stdio: 'inherit' });
}
