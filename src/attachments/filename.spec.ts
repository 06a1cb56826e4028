import { sanitizeFilename } from './filename';

describe('sanitizeFilename', () => {
  it.each([
    ['cat.png', 'cat.png', 'cat.png'],
    ['../../etc/passwd', 'passwd', 'passwd'],
    ['..\\..\\windows\\win.ini', 'win.ini', 'win.ini'],
    ['/abs/path/x.txt', 'x.txt', 'x.txt'],
    ['..', 'file', 'file'],
    ['.', 'file', 'file'],
    ['...', 'file', 'file'],
    ['dir/', 'file', 'file'],
    ['.htaccess', 'htaccess', 'htaccess'],
    ['trailing. . ', 'trailing', 'trailing'],
    ['a\u0000b\u0007c.txt', 'abc.txt', 'abc.txt'],
    ['inv\u202Efdp.exe', 'invfdp.exe', 'invfdp.exe'],
    ['zero\u200Bwidth.txt', 'zerowidth.txt', 'zerowidth.txt'],
    ['My  Report (v2).pdf', 'My Report (v2).pdf', 'My_Report_v2_.pdf'],
    ['100%.txt', '100%.txt', '100_.txt'],
    ['a?b#c&d.txt', 'a?b#c&d.txt', 'a_b_c_d.txt'],
    ['Ünïcödé 日本語.txt', 'Ünïcödé 日本語.txt', 'Ünïcödé_日本語.txt'],
    ['', 'file', 'file'],
  ])('%j → display %j, key %j', (raw, display, key) => {
    expect(sanitizeFilename(raw)).toEqual({ display, key });
  });

  it('normalizes to NFC, so one name has one key', () => {
    expect(sanitizeFilename('e\u0301.txt').key).toBe('\u00e9.txt');
  });

  it('caps the length and keeps the extension', () => {
    const { display, key } = sanitizeFilename(`${'a'.repeat(500)}.pdf`);
    expect([...display].length).toBe(200);
    expect(display.endsWith('.pdf')).toBe(true);
    expect([...key].length).toBe(100);
    expect(key.endsWith('.pdf')).toBe(true);
  });

  it('never yields a key segment that is empty, a dot path or holds a separator', () => {
    const nasty = ['../', '..\\', '/..', '. .', '\u0000', '..\u0000/..', '.\u202E.', '%2e%2e', '..%2f..%2fx'];
    for (const raw of nasty) {
      const { key } = sanitizeFilename(raw);
      expect(key).not.toMatch(/[/\\%]/);
      expect(key.startsWith('.')).toBe(false);
      expect(key.length).toBeGreaterThan(0);
    }
  });
});
