import { Layout } from '../components/layout.js';

export function Schedules() {
  return (
    <Layout title="Schedules">
      <p>Coming in this change.</p>
    </Layout>
  );
}
