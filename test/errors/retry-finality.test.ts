import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/client/api-error.js';
import { ReflexError } from '../../src/errors/reflex-error.js';
import { isFinalFailure, retryPolicy } from '../../src/errors/retry-policy.js';

const attempt = (made: number, stalledCounter = 0) => ({ attemptsMade: made, opts: { attempts: 3 }, stalledCounter });

describe('whether a failure is final (one answer for the executor and the queue)', () => {
  it('is final when marked unrecoverable, by name as an error that crossed a process boundary carries it', () => {
    expect(isFinalFailure(attempt(1), new UnrecoverableError('API_NOT_FOUND: gone'))).toBe(true);
    expect(isFinalFailure(attempt(1), { name: 'UnrecoverableError', message: 'from another process' })).toBe(true);
  });

  it('is final when its code says a retry cannot help, also for a plain object carrying it', () => {
    expect(isFinalFailure(attempt(1), new ReflexError('EXEC_FAILED', 'exit 3'))).toBe(true);
    expect(isFinalFailure(attempt(1), { name: 'ReflexError', code: 'EXEC_FAILED', retryable: false })).toBe(true);
  });

  it('retries a retryable code and an uncoded error (Redis, the worker’s own path) while attempts are left', () => {
    expect(isFinalFailure(attempt(1), new ApiError('NETWORK', 'ECONNRESET', { method: 'PUT', path: '/1.0/instances/c1/state' }))).toBe(false);
    expect(isFinalFailure(attempt(2), new ReflexError('LOCK_LOST', 'taken'))).toBe(false);
    expect(isFinalFailure(attempt(1), new Error('Connection is closed.'))).toBe(false);
  });

  it('is final once the attempts are spent, or when the job stalled too often', () => {
    expect(isFinalFailure(attempt(3), new ApiError('NETWORK', 'ECONNRESET', { method: 'PUT', path: '/1.0/instances/c1/state' }))).toBe(true);
    expect(isFinalFailure(attempt(3), new Error('Connection is closed.'))).toBe(true);
    expect(isFinalFailure(attempt(0, retryPolicy.maxStalledCount + 1), new Error('job stalled more than allowable limit'))).toBe(true);
  });
});
