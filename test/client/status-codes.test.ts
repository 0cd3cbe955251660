import { describe, expect, it } from 'vitest';
import {
  StatusCode,
  isFinalOperationCode,
  isKnownStatusCode,
  parseStatusCode,
  statusCodeOf,
  statusTable,
  statusText,
} from '../../src/client/status-code.js';

describe('status codes: the number is authoritative, the text differs by revision', () => {
  it('knows every code of the seed, with Ready only in the later revision', () => {
    const codes = [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 200, 400, 401];
    expect(statusTable().map((r) => r.code)).toEqual(codes);
    for (const c of codes) expect(isKnownStatusCode(c, 'later')).toBe(true);
    expect(isKnownStatusCode(113, 'earlier')).toBe(false);
  });

  it('spells 104 and 401 per revision and reads either spelling back', () => {
    expect(statusText(StatusCode.Cancelling, 'earlier')).toBe('Cancelling');
    expect(statusText(StatusCode.Cancelling, 'later')).toBe('Canceling');
    expect(statusText(StatusCode.Cancelled, 'earlier')).toBe('Cancelled');
    expect(statusText(StatusCode.Cancelled, 'later')).toBe('Canceled');
    expect(statusCodeOf('canceled')).toBe(401);
    expect(statusCodeOf('Cancelled')).toBe(401);
    expect(statusCodeOf('operation created')).toBe(100);
    expect(statusCodeOf('OK')).toBeUndefined();
  });

  it('rejects the reserved range 600–999 and other unknown codes as invalid', () => {
    for (const c of [600, 750, 999])
      expect(() => parseStatusCode(c)).toThrow(expect.objectContaining({ code: 'STATUS_CODE_INVALID', message: expect.stringMatching(/reserved/) }));
    for (const c of [99, 114, 201, 402, 1000, 1.5])
      expect(() => parseStatusCode(c)).toThrow(expect.objectContaining({ code: 'STATUS_CODE_INVALID' }));
    expect(() => parseStatusCode(113, 'earlier')).toThrow(/earlier revision/);
    expect(parseStatusCode(113, 'later')).toBe(113);
  });

  it('treats Success, Failure, Error and Cancelled as final for operations', () => {
    expect([100, 103, 104, 105, 200, 400, 401, 112].filter(isFinalOperationCode)).toEqual([200, 400, 401, 112]);
  });
});
