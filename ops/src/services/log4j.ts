import { writeFileSync } from 'node:fs';

/**
 * Kafka 4 and Connect log through log4j2; the properties format needs no extra jars. A `tag`
 * starts every line (processes that share one log file, e.g. the nodes of a cluster).
 */
export function writeLog4j2Config(path: string, tag?: string): void {
  writeFileSync(
    path,
    [
      'status = warn',
      'appender.out.type = Console',
      'appender.out.name = STDOUT',
      'appender.out.layout.type = PatternLayout',
      `appender.out.layout.pattern = [%d] ${tag ? `${tag} ` : ''}%p %m (%c)%n`,
      'rootLogger.level = INFO',
      'rootLogger.appenderRef.out.ref = STDOUT',
      'logger.zk.name = org.apache.kafka.clients',
      'logger.zk.level = WARN',
      'logger.reflections.name = org.reflections',
      'logger.reflections.level = ERROR',
      '',
    ].join('\n'),
  );
}
