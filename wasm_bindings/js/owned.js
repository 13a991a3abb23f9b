// The base classes of the JS API: Owned wraps one raw C++ object (delete() frees it; using it
// afterwards is a clear error); Layer adds the parameters with PyTorch's names.
import { AttnLabError, check } from './checks.js';

// A JS class around one raw C++ object.
export class Owned {
  constructor(raw, what) {
    this._raw = raw;
    this._what = what;
  }
  get raw() {
    if (!this._raw) throw new AttnLabError(`this ${this._what} was deleted`);
    return this._raw;
  }
  delete() {
    if (this._raw) this._raw.delete();
    this._raw = null;
  }
  get isDeleted() {
    return this._raw === null;
  }
}

export class Layer extends Owned {
  parameterNames() {
    const names = this.raw._parameter_names();
    const out = [];
    for (let i = 0; i < names.size(); i++) out.push(names.get(i));
    names.delete();
    return out;
  }
  // {name: Float32Array} copies of the current values, in PyTorch's state_dict order.
  parameters() {
    const out = {};
    for (const name of this.parameterNames()) out[name] = this.raw._parameter(name).slice();
    return out;
  }
  gradients() {
    const out = {};
    for (const name of this.parameterNames()) out[name] = this.raw._gradient(name).slice();
    return out;
  }
  parameterShape(name) {
    return this.raw._parameter_shape(name);
  }
  setParameter(name, values) {
    check(this.raw._set_parameter(name, values));
  }
  zeroGrad() {
    this.raw._zero_grad();
  }
}
