import ExcelJS from 'exceljs';
import { oneLine, renderRows, TextBudget, trimTrailingEmpty } from './common.ts';
import type { LoadedDocument, LoadedPage, ParseOptions } from './types.ts';

function formatDate(date: Date): string {
  if (Number.isNaN(date.getTime())) return '';
  const iso = date.toISOString();
  // Excel stores dates without a zone and exceljs reads them as UTC: midnight means "a day".
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}

/** What a person sees in the cell: formulas by their cached result, links by their text. */
function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return formatDate(value);
  if (typeof value !== 'object') return String(value);
  if ('richText' in value) return value.richText.map((run) => run.text).join('');
  if ('error' in value) return value.error;
  if ('hyperlink' in value) {
    // The text of a hyperlink can itself be rich text.
    return typeof value.text === 'string' ? value.text : cellText(value.text as ExcelJS.CellValue);
  }
  if ('formula' in value || 'sharedFormula' in value) return cellText(value.result ?? null);
  return '';
}

// Tables often start at column B or C; leading blanks would hide the header row.
function dropLeadingEmptyColumns(rows: string[][]): string[][] {
  let lead = Infinity;
  for (const row of rows) lead = Math.min(lead, row.findIndex((cell) => cell !== ''));
  return lead > 0 && Number.isFinite(lead) ? rows.map((row) => row.slice(lead)) : rows;
}

/**
 * Each sheet is a page (1-based sheet position; empty sheets are skipped), starting with a
 * "Sheet: name" line so that chunks keep which table they come from.
 */
export async function parseXlsx(data: Buffer, opts: ParseOptions): Promise<LoadedDocument> {
  const budget = new TextBudget(opts.maxTextChars);
  const workbook = new ExcelJS.Workbook();
  // exceljs's types predate Buffer being generic; the runtime accepts any Buffer.
  await workbook.xlsx.load(data as unknown as ExcelJS.Buffer);
  const pages: LoadedPage[] = [];
  const sheetNames: string[] = [];
  let rowCount = 0;
  workbook.worksheets.forEach((sheet, index) => {
    sheetNames.push(sheet.name);
    const rows: string[][] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      row.eachCell({ includeEmpty: false }, (cell, col) => {
        // A merged range reports the master's value in every cell; keep it once.
        if (cell.isMerged && cell.master.address !== cell.address) return;
        const text = oneLine(cellText(cell.value));
        if (text) cells[col - 1] = budget.take(text);
      });
      const dense = trimTrailingEmpty(Array.from(cells, (c) => c ?? ''));
      if (dense.length) rows.push(dense);
    });
    rowCount += rows.length;
    const lines = renderRows(dropLeadingEmptyColumns(rows), budget);
    if (lines.length) pages.push({ page: index + 1, text: [`Sheet: ${sheet.name}`, ...lines].join('\n') });
  });
  const title = workbook.title?.trim();
  return {
    text: pages.map((p) => p.text).join('\n\n'),
    pages,
    ...(title ? { title } : {}),
    metadata: { sheetNames, rows: rowCount },
  };
}
