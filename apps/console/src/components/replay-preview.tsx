import type { ReplayPreview as Preview } from '../api/types.js';
import { TableWrap } from './table-wrap.js';
import { shortId } from '../ids.js';
import { TableHead } from './table-head.js';
import { paths } from '../paths.js';

/** A dry run's answer: how many would be replayed, by type, class and tenant, and a sample. */
export function ReplayPreview({ preview }: { preview: Preview }) {
  return (
    <section class="replay-preview" aria-labelledby="preview-title">
      <h3 id="preview-title">Dry run: {count(preview.total)} would be replayed</h3>
      {preview.groups.length > 0 && (
        <TableWrap label="Dead letters to replay by group">
          <table>
            <caption class="visually-hidden">Dead letters to replay by type, class and tenant</caption>
            <TableHead columns={['Type', 'Class', 'Tenant', 'Dead letters']} />
            <tbody>
              {preview.groups.map((g) => (
                <tr key={`${g.tenant}/${g.type}/${g.resource_class}`}>
                  <td>{g.type}</td>
                  <td>{g.resource_class}</td>
                  <td>{g.tenant}</td>
                  <td>{g.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {preview.sample.length > 0 && (
        <p>
          A sample:{' '}
          {preview.sample.map((id, i) => (
            <span key={id}>
              {i > 0 && ', '}
              <a href={paths.job(id)} class="mono" aria-label={`sample job ${id}`}>
                {shortId(id)}
              </a>
            </span>
          ))}
        </p>
      )}
    </section>
  );
}

export const count = (n: number) => `${n} dead letter${n === 1 ? '' : 's'}`;
