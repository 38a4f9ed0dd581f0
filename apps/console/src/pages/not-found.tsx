import { Layout } from '../components/layout.js';
import { paths } from '../paths.js';

export function NotFound() {
  return (
    <Layout title="Not found">
      <p>
        No page here. <a href={paths.overview}>Back to the overview</a>.
      </p>
    </Layout>
  );
}
