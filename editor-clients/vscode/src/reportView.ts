// The report webview: one panel, reused, showing a run's report.json.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

import { renderReportHtml } from './report';

export class ReportPanel implements vscode.Disposable {
  private panel?: vscode.WebviewPanel;
  private shownPath?: string;

  /** Shows report.json at reportPath; a report that cannot be read is said so. */
  async show(reportPath: string, reveal = true): Promise<void> {
    let report: unknown;
    try {
      report = JSON.parse(await fs.readFile(reportPath, 'utf8'));
    } catch (e) {
      void vscode.window.showErrorMessage(`akg: cannot read the report ${reportPath}: ${(e as Error).message}`);
      return;
    }
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('akg.report', 'akg report', vscode.ViewColumn.Beside, {
        enableScripts: false,
        localResourceRoots: [],
      });
      this.panel.onDidDispose(() => {
        this.panel = undefined;
        this.shownPath = undefined;
      });
    } else if (reveal) {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    this.shownPath = reportPath;
    this.panel.title = `akg report: ${path.basename(path.dirname(reportPath))}`;
    this.panel.webview.html = renderReportHtml(report, {
      cspSource: this.panel.webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
    });
  }

  /** Refreshes the panel when it already shows reportPath. */
  async refresh(reportPath: string): Promise<void> {
    if (this.panel && this.shownPath === reportPath) await this.show(reportPath, false);
  }

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
