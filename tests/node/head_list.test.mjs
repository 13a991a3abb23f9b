// The heads-to-switch-off setting (web/labs/head_list.js; issue 39, item 4) as the page's field, the link
// and the CLI read it: one declaration in each of the three labs, the same parse everywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heads, parseHeadList, toggleHead } from '../../web/labs/head_list.js';
import { parseProperty } from '../../web/shared/properties.js';
import { fromQuery, toQuery } from '../../web/ui/url_state.js';
import { pretrainedLab } from '../../web/labs/05_pretrained.js';
import { translationLab } from '../../web/labs/06_translation.js';
import { writingLab } from '../../web/labs/07_writing.js';
import { commandProperties, labCommands, parseCommandArgs } from '../../web/cli/args.mjs';

test('parseHeadList: layer.head from 0, canonical text, the first bad item named', () => {
  assert.deepEqual(parseHeadList(' 0.1 , 11.3 '), { value: '0.1,11.3', heads: [{ layer: 0, head: 1 }, { layer: 11, head: 3 }] });
  assert.deepEqual(parseHeadList(''), { value: '', heads: [] });
  for (const bad of ['1', '1.', '.1', '-1.0', '1.0.2', 'a.b', '1.0,', '1.0;2.1', '0x1.0']) {
    assert.match(parseHeadList(bad).error, /is not a head: write layer\.head, numbered from 0 \(e\.g\. 0\.1\)$/, bad);
  }
  assert.equal(parseHeadList('2.1,0.0,2.1').error, 'head 2.1 is given twice');
  assert.equal(toggleHead('0.1,1.0', 0, 1), '1.0');
  assert.equal(toggleHead('1.0', 3, 2), '1.0,3.2');
  assert.deepEqual(heads('3.2'), [{ layer: 3, head: 2 }]);
});

test('each lab declares ablate once; page field, link and command read the same property', () => {
  for (const lab of [pretrainedLab, translationLab, writingLab]) {
    const props = lab.properties.filter((p) => p.name === 'ablate');
    assert.equal(props.length, 1, lab.id);
    const [prop] = props;
    assert.equal(prop.type, 'heads');
    assert.equal(prop.default, '');
    assert.deepEqual(parseProperty(prop, '0.1, 1.0'), { value: '0.1,1.0' });
    assert.match(parseProperty(prop, '0.1,0.1').error, /^Heads switched off: head 0\.1 is given twice$/);
    // The link: absent when no head is off, as typed (canonical) when some are; a bad one is a problem.
    assert.doesNotMatch(toQuery(lab, { ...fromQuery(lab, '').values }), /ablate/);
    const { values, problems } = fromQuery(lab, `?lab=${lab.id}&ablate=2.3,0.1`);
    assert.deepEqual([values.ablate, problems], ['2.3,0.1', []]);
    assert.match(toQuery(lab, values), /ablate=2\.3%2C0\.1/);
    assert.match(fromQuery(lab, `?lab=${lab.id}&ablate=x`).problems[0], /^Heads switched off: 'x' is not a head/);
    // The command that runs the lab's model takes it as --ablate, with the same parse.
    const command = labCommands(lab).find((c) => c.properties.includes('ablate'));
    assert.ok(command, lab.id);
    assert.ok(commandProperties(lab, command).includes(prop));
    const argv = ['--model', '/tmp', '--ablate', '1.0, 0.1'];
    assert.equal(parseCommandArgs(lab, command, argv).values.ablate, '1.0,0.1');
    assert.throws(() => parseCommandArgs(lab, command, ['--model', '/tmp', '--ablate', '1.0,1.0']), (e) => e.constructor.name === 'UsageError' && e.message === '--ablate: head 1.0 is given twice');
  }
});
