import { ProcessDeployment, type DeploymentOptions } from '@kairos/ops';
import type { Namespace } from './namespace.js';
import { RESOURCE_CLASSES } from './pipeline.js';

/**
 * Kairos as separate OS processes (api, delay tier, tracker… each from its entry point) inside
 * the test's namespace, for tests that SIGKILL a real app. Stopped (every app, the connector) on
 * cleanup. App output goes to the test output when KAIROS_TEST_LOG is set.
 */
export async function startDeployment(
  ns: Namespace,
  options: Pick<DeploymentOptions, 'apps' | 'env' | 'onLine'> = {},
): Promise<ProcessDeployment> {
  const level = process.env.KAIROS_TEST_LOG;
  const d = await ProcessDeployment.start({
    services: ns.services,
    id: ns.id,
    prefix: ns.prefix,
    schema: ns.schema,
    resourceClasses: RESOURCE_CLASSES,
    logLevel: level ?? 'info',
    ...options,
    onLine: (app, line) => {
      if (level) console.log(`[${app}] ${line}`);
      options.onLine?.(app, line);
    },
  });
  ns.defer(() => d.stop());
  return d;
}
