/**
 * Chart work in tasks of its own. Switching the x-axis or the smoothing redraws every chart of the
 * compare view, and each redraw of a 100k-point run smooths and thins all its points: done in one
 * go that is one long main-thread task (a frozen page). Queued here, each chart is one task, and
 * the browser paints and handles input between them.
 *
 * A MessageChannel message runs as soon as the current task ends, without setTimeout's 4 ms
 * clamp; one job runs per message.
 */

type Job = () => void;

const queue: Job[] = [];
let channel: MessageChannel | undefined;
let posted = false;

function runOne(): void {
  posted = false;
  const job = queue.shift();
  if (queue.length > 0) post();
  job?.();
}

function post(): void {
  if (posted) return;
  posted = true;
  if (typeof MessageChannel === 'undefined') {
    setTimeout(runOne, 0);
    return;
  }
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = runOne;
  }
  channel.port2.postMessage(null);
}

/** Runs `job` in a task of its own, after the jobs queued before it; the result cancels it. */
export function inOwnTask(job: Job): () => void {
  queue.push(job);
  post();
  return () => {
    const at = queue.indexOf(job);
    if (at >= 0) queue.splice(at, 1);
  };
}
