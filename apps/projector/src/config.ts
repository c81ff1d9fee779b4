import { wholeNumberSetting } from '@sendline/infra';

/** The projector's settings, from the environment (see `projectorConfigFromEnv` for the variables). */
export interface ProjectorConfig {
  /** Where the metrics (lag per partition) are served, on 127.0.0.1; 0 picks a free port (logged at start). */
  metricsPort: number;
  /** How long each view's group waits for a silent member (a killed projector) before its partitions go to another. */
  sessionTimeoutMs: number;
  /** The views' consumer groups are `<groupPrefix>-<view>`, the archiver's `<groupPrefix>-accounts-archiver`. */
  groupPrefix: string;
}

/**
 * | variable                              | default | meaning                                  |
 * |---------------------------------------|---------|------------------------------------------|
 * | SENDLINE_PROJECTOR_METRICS_PORT       | 9464    | the metrics port, on 127.0.0.1; 0: a free one |
 * | SENDLINE_PROJECTOR_SESSION_TIMEOUT_MS | 30000   | consumer session timeout (at least 6000) |
 * | SENDLINE_PROJECTOR_GROUP_PREFIX       | projector | the consumer groups' names: `<it>-<view>` |
 *
 * A projector killed with SIGKILL leaves its members in every view's group until this timeout: the copy started
 * after it is given the partitions then, so this is how long the views stand still after such a kill.
 */
export function projectorConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ProjectorConfig {
  return {
    metricsPort: wholeNumberSetting(env, 'SENDLINE_PROJECTOR_METRICS_PORT', 9464, 0, 65_535),
    sessionTimeoutMs: wholeNumberSetting(env, 'SENDLINE_PROJECTOR_SESSION_TIMEOUT_MS', 30_000, 6000),
    groupPrefix: env.SENDLINE_PROJECTOR_GROUP_PREFIX || 'projector',
  };
}
