import { mimeTypeOfUrl } from './attachment-types';

describe('mimeTypeOfUrl', () => {
  it.each([
    ['https://cdn.example.com/files/a/b/cat.PNG', 'image/png'],
    ['https://cdn.example.com/files/a/photo.jpeg?v=2#x', 'image/jpeg'],
    ['https://cdn.example.com/files/report.final.pdf', 'application/pdf'],
    [
      'https://cdn.example.com/files/sheet.xlsx',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    ],
    ['https://cdn.example.com/files/no-extension', 'application/octet-stream'],
    ['https://cdn.example.com/files/.hidden', 'application/octet-stream'],
    ['https://cdn.example.com/files/archive.tar.gz', 'application/octet-stream'],
  ])('%s → %s', (url, mime) => {
    expect(mimeTypeOfUrl(url)).toBe(mime);
  });
});
