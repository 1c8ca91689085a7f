import { indexTerms, queryTerms } from '../work/main/src/text/search-terms';
console.log(queryTerms('When did Caroline go to the LGBTQ support group? She went there, goes often; chose choosing INC-4412 café'));
console.log(indexTerms('the the supported supports'));
