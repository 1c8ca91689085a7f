/**
 * English words too common to tell one entry from another ("when", "did", "the"): left out of the
 * history search index and of queries, so a question's content words decide its ranking.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are aren as at be because been before being below between both but by ' +
    'can cannot could couldn did didn do does doesn doing don down during each few for from further had hadn has hasn have haven having ' +
    'he her here hers herself him himself his how i if in into is isn it its itself just let ll me more most mustn my myself ' +
    'nor of off on once only or other ought our ours ourselves out over own re s same shan she should shouldn so some such ' +
    't than that the their theirs them themselves then there these they this those through to too under until up ve very ' +
    'was wasn we were weren what when where which while who whom why will with won would wouldn you your yours yourself yourselves ' +
    'd m o y also us'
  ).split(' '),
);
