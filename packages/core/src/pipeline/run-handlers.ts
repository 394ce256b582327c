/**
 * Step 7 of the pipeline (docs/architecture.md §3.7): running a delivery's handlers within `handlerTimeoutMs`, and telling the
 * `onError` handlers about failures and timeouts. What happens to the claim afterwards is claim-run-settle.ts's job.
 */
import { isThenable, SharedDeadline, TIMED_OUT, type Thenable } from './deadline.js';
import { DeliveryContext, HandlerError, type HandlerRegistry } from './dispatch.js';
import type { Envelope } from '../events/envelope.js';

/** Handlers finished (or there were none). */
export const HANDLED = 'handled';
/** How a handler run ended: finished, failed, or still running past its deadline. */
export type HandlerOutcome = typeof HANDLED | HandlerError | { stillRunning: PromiseLike<unknown> };
/** Runs `run` (the handlers of one event) within the receiver's deadline; see {@link createHandlerRunner}. */
export type RunHandlers = (
  run: () => unknown,
  context: DeliveryContext,
  envelope: Envelope,
) => HandlerOutcome | Promise<HandlerOutcome>;

/**
 * Creates the receiver's handler runner. A synchronous handler costs no timer and no promise: its outcome comes back
 * as is. Past the deadline the context's signal is aborted and the still-running work is handed back, so the caller
 * can settle the claim when it ends.
 */
export function createHandlerRunner(handlers: HandlerRegistry, handlerTimeoutMs: number): RunHandlers {
  const deadline = new SharedDeadline(handlerTimeoutMs);
  function notifyError(error: HandlerError): void {
    for (const onError of handlers.error) {
      // Notifications: never awaited (a hanging onError must not hang the delivery), their failures change nothing.
      try {
        const pending = onError(error);
        if (isThenable(pending)) pending.then(undefined, () => {});
      } catch {
        // ignored, as above
      }
    }
  }

  function failed(error: unknown, envelope: Envelope): HandlerError {
    const failure =
      error instanceof HandlerError ? error : new HandlerError(envelope.event, envelope.event_id, [error]);
    notifyError(failure);
    return failure;
  }

  async function awaitHandlers(
    pending: PromiseLike<unknown>,
    context: DeliveryContext,
    envelope: Envelope,
  ): Promise<HandlerOutcome> {
    try {
      if ((await deadline.within(pending)) !== TIMED_OUT) return HANDLED;
    } catch (error) {
      return failed(error, envelope);
    }
    const reason = new DOMException(
      `the handler did not finish within handlerTimeoutMs (${handlerTimeoutMs} ms)`,
      'TimeoutError',
    );
    DeliveryContext.abort(context, reason);
    notifyError(new HandlerError(envelope.event, envelope.event_id, [reason]));
    return { stillRunning: pending };
  }

  return function runHandlers(
    run: () => unknown,
    context: DeliveryContext,
    envelope: Envelope,
  ): HandlerOutcome | Promise<HandlerOutcome> {
    let pending: unknown;
    try {
      pending = run();
      // Inside the try: reading `then` runs a getter a handler's result may have. Read here, not by isThenable (Thenable).
      if (typeof (pending as Thenable | null | undefined)?.then !== 'function') return HANDLED;
    } catch (error) {
      return failed(error, envelope);
    }
    return awaitHandlers(pending as PromiseLike<unknown>, context, envelope);
  };
}
