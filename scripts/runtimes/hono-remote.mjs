export async function runHonoRemote() { return { suites: 'todo', passed: 0, failed: 1 }; }
