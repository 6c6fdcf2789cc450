// Running jobs as the status bar shows them. Pure logic: the extension feeds
// it the jobIds the server answers and the akg/jobFinished notifications.

export interface JobFinished {
  id: number;
  uri: string;
  status: string;
  paths?: { sketch?: string | null; kernel?: string | null; modelNew?: string | null; report?: string | null };
  speedup?: number | null;
  error?: { class: string; detail: string } | null;
}

interface Running {
  id: number;
  title: string;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** false when there is nothing to show */
  visible: boolean;
}

function baseName(uri: string): string {
  const slash = uri.lastIndexOf('/');
  return decodeURIComponent(slash >= 0 ? uri.slice(slash + 1) : uri);
}

export class JobTracker {
  private running = new Map<number, Running>();
  private last?: JobFinished;

  started(id: number, title: string): void {
    if (!this.running.has(id)) this.running.set(id, { id, title });
  }

  finished(n: JobFinished): void {
    this.running.delete(n.id);
    this.last = n;
  }

  get count(): number {
    return this.running.size;
  }

  ids(): number[] {
    return [...this.running.keys()];
  }

  view(): StatusView {
    if (this.running.size > 0) {
      const jobs = [...this.running.values()];
      const text = jobs.length === 1
        ? `$(sync~spin) akg: ${jobs[0].title}`
        : `$(sync~spin) akg: ${jobs.length} jobs`;
      return {
        text: text.length > 80 ? `${text.slice(0, 77)}...` : text,
        tooltip: jobs.map((j) => `job ${j.id}: ${j.title}`).join('\n') +
          '\nClick to cancel.',
        visible: true,
      };
    }
    if (this.last) {
      const l = this.last;
      const name = baseName(l.uri);
      const icon = l.status === 'pass' ? '$(check)' : l.status === 'cancelled' ? '$(circle-slash)' : '$(error)';
      const speed = typeof l.speedup === 'number' ? ` ${l.speedup.toFixed(2)}x` : '';
      return {
        text: `${icon} akg: ${name} ${l.status}${speed}`,
        tooltip: l.error ? `${l.error.class}: ${l.error.detail}` : 'Click to open the report.',
        visible: true,
      };
    }
    return { text: 'akg', tooltip: '', visible: false };
  }
}
