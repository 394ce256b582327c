import { handleWebhook } from '../../../../lib/receiver';

// The receiver verifies HMACs with node:crypto and keeps its dedupe store in this process's memory.
export const runtime = 'nodejs';
// Never prerendered or cached: every delivery is read as it came.
export const dynamic = 'force-dynamic';

export function POST(request: Request): Promise<Response> {
  return handleWebhook(request);
}
