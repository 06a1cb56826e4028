// `npm start` on a fresh clone: build once if dist/ is missing or older than src/.
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
if (!existsSync(main) || statSync(main).mtimeMs < newest(join(root, 'src'))) {
  process.stderr.write('building dist/ ...\n');
  execSync('npm run build --silent', { cwd: root, stdio: 'inherit' });
}
