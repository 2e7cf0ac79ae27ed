//! Draws random numbers from a SavedModel written by the Python package, with no Python:
//! calls the `gt.function` at an attribute path of the saved object with the given int64
//! seed (or with no argument when no seed is given) and prints each output's values, one
//! line per output (a dict's outputs in key order). A function of stateless random ops
//! (`gt.random.stateless_normal(..., seed=seed)`) gives the numbers it gives in Python
//! for the same seed; a `gt.random.Generator`'s draws continue from its saved state.
//!
//! ```text
//! python -c 'import gradtape as gt
//! class M(gt.Module):
//!     @gt.function(input_signature=[gt.TensorSpec([2], gt.int64)])
//!     def draw(self, seed):
//!         return gt.random.stateless_normal([3], seed=seed)
//! gt.saved_model.save(M(), "rng_model")'
//! cargo run --example random_saved_model -- rng_model draw 1 2
//! ```

use gradtape::{saved_model, DType, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 && args.len() != 4 {
        eprintln!("usage: random_saved_model SAVED_MODEL_DIR FUNCTION_PATH [SEED0 SEED1]");
        std::process::exit(2);
    }
    let model = saved_model::load(&args[0])?;
    let f = model
        .function(&args[1])
        .ok_or_else(|| format!("the model has no function at {}", args[1]))?;
    let inputs = if args.len() == 4 {
        let seed = vec![args[2].parse::<i64>()?, args[3].parse::<i64>()?];
        vec![Tensor::from_vec(seed, &[2])?]
    } else {
        vec![]
    };
    for y in f.call(&inputs)? {
        let v = gradtape::ops::cast(&y, DType::F64)?.to_vec::<f64>()?;
        let text: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
        println!("{} [{}]", y.dtype().name(), text.join(", "));
    }
    Ok(())
}
