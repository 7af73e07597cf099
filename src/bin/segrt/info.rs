//! `segrt info`: how segrt reads a UNet model or a SAM2 pair (JSON).

use std::path::PathBuf;

use segrt::sam2::Sam2Segmenter;
use segrt::Options;

use crate::args::{ModelArgs, SessionArgs};
use crate::unet::load_segmenter;
use crate::CliResult;

pub fn info(models: &[PathBuf], model_args: &ModelArgs, session: &SessionArgs, ort: Option<PathBuf>) -> CliResult {
    let mut options = Options { ort_path: ort, ..Options::default() };
    session.apply(&mut options)?;
    let json = match models {
        [model] => {
            model_args.apply(&mut options)?;
            serde_json::to_string_pretty(&load_segmenter(model, options)?.0.info())
        }
        [_, _] if model_args.any() => return Err("--scale, --mean, --std and --output apply to a UNet model, not a SAM2 pair".into()),
        [encoder, decoder] => {
            let sam = Sam2Segmenter::from_files(encoder, decoder, options).map_err(|e| e.to_string())?;
            serde_json::to_string_pretty(&sam.info())
        }
        _ => return Err("give one UNet model, or a SAM2 encoder and decoder".into()),
    };
    say!("{}", json.map_err(|e| e.to_string())?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Command};
    use clap::Parser;

    #[test]
    fn info_takes_the_flags_for_a_unet_model_only() {
        let cli = Cli::try_parse_from(["segrt", "info", "--mean", "1,2,3", "m.onnx"]).unwrap();
        let Command::Info { models, model, session } = cli.command else { unreachable!("parsed as info") };
        assert_eq!((models.len(), model.mean.as_deref()), (1, Some("1,2,3")));
        let e = info(&[PathBuf::from("e.onnx"), PathBuf::from("d.onnx")], &model, &session, None).err().unwrap();
        assert!(e.to_string().contains("apply to a UNet model"), "{e}");
    }
}
