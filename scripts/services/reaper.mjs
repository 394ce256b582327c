// Watchdog for the test servers. It runs detached from the test run, so it outlives even a SIGKILLed vitest: once the
// parent process is gone it stops the servers listed in the state file (by PID) and deletes their data directories.
// The test run's own teardown normally does this first and then stops this watchdog.
import { readFileSync, rmSync } from 'node:fs';

const [parentPid, stateFile] = [Number(process.argv[2]), process.argv[3]];

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return error.code === 'EPERM';
  }
  // A server that exited after its parent died stays a zombie until PID 1 reaps it, which some containers' PID 1
  // never does; it is gone for our purposes.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function kill(pid, signal) {
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function state() {
  try {
    return JSON.parse(readFileSync(stateFile, 'utf8'));
  } catch {
    return { servers: [], root: undefined };
  }
}

const timer = setInterval(() => {
  if (alive(parentPid)) return;
  clearInterval(timer);
  const { servers, root } = state();
  for (const { pid, signal } of servers) kill(pid, signal);
  const deadline = Date.now() + 5_000;
  const wait = setInterval(() => {
    const left = servers.filter(({ pid }) => alive(pid));
    if (left.length > 0 && Date.now() < deadline) return;
    clearInterval(wait);
    for (const { pid } of left) kill(pid, 'SIGKILL');
    if (root) rmSync(root, { recursive: true, force: true });
    process.exit(0);
  }, 100);
}, 500);
