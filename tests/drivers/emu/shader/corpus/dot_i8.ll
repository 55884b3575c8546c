; dot_i8.ll: int8 dot products, through llvm.amdgcn.sdot4 and through plain sext/mul/add.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.sdot4(i32, i32, i32, i1)

define amdgpu_kernel void @dot_sdot4(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a,
                                     ptr addrspace(1) noalias readonly %b) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %i64 = zext i32 %i to i64
  %pa = getelementptr inbounds i32, ptr addrspace(1) %a, i64 %i64
  %pb = getelementptr inbounds i32, ptr addrspace(1) %b, i64 %i64
  %x = load i32, ptr addrspace(1) %pa, align 4
  %y = load i32, ptr addrspace(1) %pb, align 4
  %d = call i32 @llvm.amdgcn.sdot4(i32 %x, i32 %y, i32 %i, i1 false)
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %i64
  store i32 %d, ptr addrspace(1) %po, align 4
  ret void
}

define amdgpu_kernel void @dot_plain(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a,
                                     ptr addrspace(1) noalias readonly %b) #0 {
entry:
  %lid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 5
  %i = add nuw nsw i32 %base, %lid
  %i64 = zext i32 %i to i64
  %pa = getelementptr inbounds <4 x i8>, ptr addrspace(1) %a, i64 %i64
  %pb = getelementptr inbounds <4 x i8>, ptr addrspace(1) %b, i64 %i64
  %x = load <4 x i8>, ptr addrspace(1) %pa, align 4
  %y = load <4 x i8>, ptr addrspace(1) %pb, align 4
  %xs = sext <4 x i8> %x to <4 x i32>
  %ys = sext <4 x i8> %y to <4 x i32>
  %p = mul <4 x i32> %xs, %ys
  %s = call i32 @llvm.vector.reduce.add.v4i32(<4 x i32> %p)
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %i64
  store i32 %s, ptr addrspace(1) %po, align 4
  ret void
}
declare i32 @llvm.vector.reduce.add.v4i32(<4 x i32>)

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
