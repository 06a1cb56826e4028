import { findPhoneNumbers } from './phone';
import { maskSpans } from './spans';

const mask = (text: string) => maskSpans(text, findPhoneNumbers(text));

describe('phone rule', () => {
  it.each([
    ['call me at +1 415 555 0100', 'call me at ***'],
    ['+1 415 555 2671', '***'],
    ['(415) 555-2671', '***'],
    ['call 415-555-2671 now', 'call *** now'],
    ['415.555.2671', '***'],
    ['+14155552671', '***'],
    ['+44 20 7946 0958', '***'],
    ['020 7946 0958', '***'],
    ['ring 0044 20 7946 0958', 'ring ***'],
    ['+49 30 901820', '***'],
    ['030 901820', '***'],
    ['+33 1 42 68 53 00', '***'],
    ['01 42 68 53 00', '***'],
    ['+91 98765 43210', '***'],
    ['+34 912 345 678', '***'],
    ['whatsapp 0176 12345678 or +1 415 555 2671', 'whatsapp *** or ***'],
  ])('finds %p', (text, masked) => {
    expect(mask(text)).toBe(masked);
  });

  it.each([
    '$1,299.99',
    'order #123456789',
    'order 123456789',
    'ticket 987654321',
    '2026-11-21',
    'on 21.11.2026 at 10:30',
    '10:30',
    'version 1.2.3',
    'pay 1299 euros',
    'in 2026 we sold 15000',
    'ISBN 978-3-16-148410-0',
    'card 4111 1111 1111 1111',
    '12/05/2024',
    '1,000,000 users',
    'ref 1234567890',
    'IBAN DE89 3704 0044 0532 0130 00',
  ])('lets %p through', (text) => {
    expect(findPhoneNumbers(text)).toEqual([]);
  });
});
